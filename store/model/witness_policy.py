"""Which logs and witnesses a verifier trusts, and how many witnesses must have cosigned: the
C2SP tlog-policy file (log, witness, group, quorum lines), or the command line's
`--key`, `--witness-key` and `--quorum N` (N of the listed witnesses).

A checkpoint short of the quorum is refused, the error naming who did and did not cosign.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field

from store.errors import CheckpointError, SignatureError
from store.model.checkpoint import COSIGNATURE_V1, ED25519, Checkpoint, VerifierKey, open_checkpoint
from store.model.cosignature import CheckedCheckpoint, check_note

NONE = "none"  # tlog-policy's predefined quorum: no cosignature needed
MAX_POLICY_BYTES = 1 << 16


@dataclass(frozen=True, slots=True)
class Group:
    """At least `threshold` of `members` (witness or group names) witnessed."""

    threshold: int
    members: tuple[str, ...]


@dataclass(frozen=True)
class WitnessPolicy:
    logs: tuple[VerifierKey, ...]
    witnesses: Mapping[str, VerifierKey]  # policy name -> cosigning key
    groups: Mapping[str, Group] = field(default_factory=dict)
    quorum: str = NONE

    @classmethod
    def of_keys(cls, logs: Sequence[VerifierKey], witnesses: Sequence[VerifierKey],
                quorum: int | None = None) -> WitnessPolicy:
        """`quorum` of `witnesses` (default: all of them; none when no witness is listed)."""
        named: dict[str, VerifierKey] = {}
        for key in witnesses:
            _check_witness_key(key)
            if key.name in named:
                raise CheckpointError(f"witness {key.name} is listed twice (a quorum counts "
                                      "each witness once: give each key once, each name once)")
            _check_new_key(key, named)
            named[key.name] = key
        _check_not_a_log_key(logs, named)
        needed = len(named) if quorum is None else quorum
        if not 0 <= needed <= len(named):
            raise CheckpointError(f"quorum {needed}: must be between 0 and the {len(named)} "
                                  "witness key(s) given")
        if needed == 0:
            return cls(tuple(logs), named)
        return cls(tuple(logs), named, {"quorum": Group(needed, tuple(named))}, "quorum")

    @classmethod
    def parse(cls, text: str) -> WitnessPolicy:
        """A C2SP tlog-policy file; CheckpointError naming the line otherwise."""
        logs: list[VerifierKey] = []
        witnesses: dict[str, VerifierKey] = {}
        groups: dict[str, Group] = {}
        quorum: str | None = None
        for number, raw in enumerate(text.split("\n"), 1):
            words = raw.replace("\t", " ").split()
            if not words or words[0].startswith("#"):
                continue
            where = f"policy line {number}"
            try:
                quorum = _policy_line(words, logs, witnesses, groups, quorum)
            except CheckpointError as exc:
                raise CheckpointError(f"{where}: {exc}") from None
        if quorum is None:
            raise CheckpointError("policy has no quorum line")
        _check_not_a_log_key(logs, witnesses)
        return cls(tuple(logs), witnesses, groups, quorum)

    def _witnessed(self, name: str, cosigned: set[bytes]) -> bool:
        """Counted by key: a witness counts when its own public key's cosignature verified,
        never because another key of the same name cosigned."""
        if name == NONE:
            return True
        group = self.groups.get(name)
        if group is None:
            return self.witnesses[name].public_key in cosigned
        return sum(self._witnessed(m, cosigned) for m in group.members) >= group.threshold

    def check(self, note: str) -> CheckedCheckpoint:
        """The checkpoint if a listed log signed it and the quorum cosigned it."""
        checked = check_note(note, self.logs, list(self.witnesses.values()))
        origin = checked.checkpoint.origin
        if not any(key.name == origin for key in checked.log_signers):
            # tlog-policy: the log key's name "MUST correspond to the log's origin line"
            names = ", ".join(key.name for key in checked.log_signers)
            raise SignatureError(f"checkpoint of origin {origin!r} is signed by log key "
                                 f"{names}, whose name is not its origin: a log key names the "
                                 "log it signs for (make one with `keygen ORIGIN`)")
        cosigned = {c.public_key for c in checked.cosigners}
        if not self._witnessed(self.quorum, cosigned):
            signed = ", ".join(sorted(n for n, k in self.witnesses.items()
                                      if k.public_key in cosigned)) or "none"
            missing = ", ".join(sorted(n for n, k in self.witnesses.items()
                                       if k.public_key not in cosigned)) or "none"
            raise SignatureError(f"checkpoint is short of the witness quorum ({self.describe()})"
                                 f": cosigned by {signed}; not by {missing}")
        return checked

    def describe(self) -> str:
        if self.quorum == NONE:
            return "no cosignature needed"
        group = self.groups.get(self.quorum)
        if group is None:
            return f"{self.quorum} must cosign"
        return f"{group.threshold} of {', '.join(group.members)}"


def _policy_line(words: list[str], logs: list[VerifierKey], witnesses: dict[str, VerifierKey],
                 groups: dict[str, Group], quorum: str | None) -> str | None:
    keyword, args = words[0], words[1:]
    defined = set(witnesses) | set(groups)
    if keyword == "log" and len(args) in (1, 2):
        key = VerifierKey.parse(args[0])
        if key.key_type != ED25519:
            raise CheckpointError(f"log key {key.name} is not a note signing key (type 0x01)")
        if any(k.public_key == key.public_key for k in logs):
            raise CheckpointError(f"log key {key.name} is listed twice")
        logs.append(key)
    elif keyword == "witness" and len(args) in (2, 3):
        name, key = args[0], VerifierKey.parse(args[1])
        if name in defined or name == NONE:
            raise CheckpointError(f"name {name} is defined twice")
        _check_witness_key(key)
        _check_new_key(key, witnesses, name)
        witnesses[name] = key
    elif keyword == "group" and len(args) >= 3:
        name, k, members = args[0], args[1], tuple(args[2:])
        if name in defined or name == NONE:
            raise CheckpointError(f"name {name} is defined twice")
        unknown = [m for m in members if m not in defined]
        if unknown or len(set(members)) != len(members):
            raise CheckpointError(f"group {name}: members must be defined above, each once "
                                  f"(unknown: {', '.join(unknown) or 'none'})")
        threshold = {"all": len(members), "any": 1}.get(k)
        if threshold is None:
            if not k.isdigit() or k != str(int(k)) or not 1 <= int(k) <= len(members):
                raise CheckpointError(f"group {name}: threshold {k!r} is not all, any or 1.."
                                      f"{len(members)}")
            threshold = int(k)
        groups[name] = Group(threshold, members)
    elif keyword == "quorum" and len(args) == 1:
        if quorum is not None:
            raise CheckpointError("a second quorum line")
        if args[0] != NONE and args[0] not in defined:
            raise CheckpointError(f"quorum {args[0]} is not defined above")
        return args[0]
    else:
        raise CheckpointError(f"not a log, witness, group or quorum line: {' '.join(words)[:80]}")
    return quorum


def _check_witness_key(key: VerifierKey) -> None:
    if key.key_type not in (COSIGNATURE_V1, ED25519):
        raise CheckpointError(f"witness key {key.name} is not an Ed25519 key (type 0x04, or "
                              "0x01)")


def _check_not_a_log_key(logs: Sequence[VerifierKey], witnesses: Mapping[str, VerifierKey]
                         ) -> None:
    """A log's own key never counts as a witness of it."""
    for name, key in witnesses.items():
        if any(log.public_key == key.public_key for log in logs):
            raise CheckpointError(f"witness {name}'s key is the log's key {key.name}: a log "
                                  "cannot witness itself")


def _check_new_key(key: VerifierKey, known: Mapping[str, VerifierKey],
                   name: str | None = None) -> None:
    """tlog-policy: "Duplicate witnesses, i.e., multiple witness lines with the same public
    key, are not allowed" (whatever their key names or types)."""
    for other_name, other in known.items():
        if other.public_key == key.public_key:
            raise CheckpointError(f"witness {name or key.name}'s key is listed twice: it is "
                                  f"also witness {other_name}'s (one key counts once)")


def checkpoint_under(policy: WitnessPolicy | None, text: str) -> tuple[Checkpoint, str]:
    """The checkpoint `text` holds and the log key that signed it: with no policy, read
    unchecked ("" for the key); with one, only if a listed log key signed exactly this text
    and the witness quorum cosigned it (CheckpointError or ValueError otherwise)."""
    if policy is None:
        return open_checkpoint(text), ""
    checked = policy.check(text)
    return checked.checkpoint, checked.signed_by
