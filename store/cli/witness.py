"""`core-audit witness serve`: a C2SP tlog-witness, for an auditor's own machine."""

from __future__ import annotations

from pathlib import Path

import click

from store.cli.checkpoints import load_signer
from store.cli.verify import load_verifier

_FILE = click.Path(exists=True, dir_okay=False, path_type=Path)


def parse_log_option(value: str) -> tuple[str, str]:
    """`ORIGIN=VERIFIERKEY` (the key's base64 may end in '=': split at the first one)."""
    origin, equals, key = value.partition("=")
    if not equals or not origin or not key:
        raise click.BadParameter(f"{value[:80]!r}: give ORIGIN=VERIFIERKEY")
    return origin, key


@click.group()
def witness() -> None:
    """Witness other logs: cosign their checkpoints once each is shown to extend the last."""


@witness.command("serve")
@click.option("--key", required=True, type=_FILE, metavar="PREFIX.key",
              help="The witness's cosigning key (make one with `keygen NAME --witness`).")
@click.option("--log", "logs", required=True, multiple=True, metavar="ORIGIN=VERIFIERKEY",
              help="A log to witness, by its origin and verifier key (key text or a file); "
                   "repeat for more logs or for a log's second key.")
@click.option("--state", required=True, type=click.Path(file_okay=False, path_type=Path),
              metavar="DIR", help="Where the witness keeps each log's last cosigned tree.")
@click.option("--host", default="127.0.0.1", show_default=True, help="Interface to bind.")
@click.option("--port", default=8080, show_default=True, type=click.IntRange(0, 65535),
              help="Port to listen on.")
def serve(key: Path, logs: tuple[str, ...], state: Path, host: str, port: int) -> None:
    """Serve POST /add-checkpoint (C2SP tlog-witness): check the log's signature and the
    consistency proof from the size last cosigned, refuse an old size that is not the one
    held (409, body the size held, Content-Type text/x.tlog.size), unknown logs (404), bad
    signatures (403), malformed requests (400), forks at the same size and bad proofs (422);
    answer a cosignature/v1 line (extension lines included in what it signs). The state is
    written and fsynced before each answer. GET /<sha256(origin) hex>/checkpoint serves the
    newest checkpoint cosigned for a log. The key may be a cosigning key (0x04) or a plain
    Ed25519 key (0x01); either way it answers cosignature/v1 lines."""
    import uvicorn

    from store.api.witness_server import Witness, WitnessState, create_witness_app
    from store.model.checkpoint import VerifierKey

    signer = load_signer(key)  # type 0x04 (`keygen --witness`) or a plain 0x01 Ed25519 key
    trusted: dict[str, list[VerifierKey]] = {}
    for value in logs:
        origin, text = parse_log_option(value)
        verifier = load_verifier(text, f"--log {origin}")
        if verifier.is_cosigner:
            raise click.ClickException(f"--log {origin}: a witness key, not a log's key")
        trusted.setdefault(origin, []).append(verifier)
    app = create_witness_app(Witness(signer, trusted, WitnessState(state)))
    for origin in trusted:
        if any(v.public_key == signer.verifier.public_key for v in trusted[origin]):
            raise click.ClickException(f"--log {origin}: that is the witness's own key")
    click.echo(f"witness {signer.verifier} at http://{host}:{port}/add-checkpoint for "
               f"{', '.join(sorted(trusted))}", err=True)
    uvicorn.run(app, host=host, port=port, log_level="warning")
