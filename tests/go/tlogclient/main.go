// tlogclient reads a C2SP tlog-tiles log over HTTP with Go's reference packages
// (golang.org/x/mod/sumdb/note and tlog, Debian's golang-golang-x-mod-dev) and checks it:
// the checkpoint's signature by the log key, each witness's cosignature/v1 (Ed25519, checked
// here with crypto/ed25519 alone), every entry's inclusion proof, and the tree's consistency
// with an older size. It shares no code with core-audit.
//
//	tlogclient BASEURL LOGVKEY [-old SIZE:BASE64ROOT] [WITNESSVKEY...]
//	tlogclient -note FILE LOGVKEY [WITNESSVKEY...]
//
// A witness key is a type 0x04 (cosignature/v1) or a plain 0x01 Ed25519 vkey: either way the
// cosignature line's key ID is SHA-256(name || 0x0A || 0x04 || key)[:4].
package main

import (
	"bytes"
	"crypto/ed25519"
	"crypto/sha256"
	"encoding/base64"
	"encoding/binary"
	"fmt"
	"io"
	"net/http"
	"os"
	"strconv"
	"strings"

	"golang.org/x/mod/sumdb/note"
	"golang.org/x/mod/sumdb/tlog"
)

const height = 8

func fail(format string, args ...interface{}) {
	fmt.Fprintf(os.Stderr, "tlogclient: "+format+"\n", args...)
	os.Exit(1)
}

func get(url string) []byte {
	resp, err := http.Get(url)
	if err != nil {
		fail("GET %s: %v", url, err)
	}
	defer resp.Body.Close()
	data, err := io.ReadAll(resp.Body)
	if err != nil || resp.StatusCode != 200 {
		fail("GET %s: status %d %v", url, resp.StatusCode, err)
	}
	return data
}

// c2spPath is the C2SP tiles path of a tile: not tlog.Tile.Path(), whose layout differs.
func c2spPath(level string, n int64, w int) string {
	groups := []string{fmt.Sprintf("%03d", n%1000)}
	for n /= 1000; n > 0; n /= 1000 {
		groups = append([]string{fmt.Sprintf("x%03d", n%1000)}, groups...)
	}
	p := "tile/" + level + "/" + strings.Join(groups, "/")
	if w < 1<<height {
		p += fmt.Sprintf(".p/%d", w)
	}
	return p
}

// reader fetches each tile once (a client keeps what it has read: tiles never change).
type reader struct {
	base  string
	cache map[string][]byte
}

func (r reader) Height() int { return height }

func (r reader) ReadTiles(tiles []tlog.Tile) ([][]byte, error) {
	out := make([][]byte, len(tiles))
	for i, t := range tiles {
		if t.H != height {
			return nil, fmt.Errorf("tile height %d", t.H)
		}
		path := c2spPath(strconv.Itoa(t.L), t.N, t.W)
		data, ok := r.cache[path]
		if !ok {
			data = get(r.base + "/" + path)
			r.cache[path] = data
		}
		if len(data) != t.W*tlog.HashSize {
			return nil, fmt.Errorf("tile %v: %d bytes", t, len(data))
		}
		out[i] = data
	}
	return out, nil
}

func (r reader) SaveTiles(tiles []tlog.Tile, data [][]byte) {}

func entries(base string, size int64) [][]byte {
	var all [][]byte
	for n := int64(0); n*256 < size; n++ {
		w := 256
		if size-n*256 < 256 {
			w = int(size - n*256)
		}
		data := get(base + "/" + c2spPath("entries", n, w))
		for len(data) > 0 {
			if len(data) < 2 {
				fail("entry bundle %d: truncated length", n)
			}
			l := int(binary.BigEndian.Uint16(data))
			if len(data) < 2+l {
				fail("entry bundle %d: truncated entry", n)
			}
			all = append(all, data[2:2+l])
			data = data[2+l:]
		}
		if int64(len(all)) != n*256+int64(w) {
			fail("entry bundle %d: %d entries in all, want %d", n, len(all), n*256+int64(w))
		}
	}
	return all
}

func checkCosignature(vkey, body, text string) {
	parts := strings.SplitN(vkey, "+", 3)
	if len(parts) != 3 {
		fail("witness key %q", vkey)
	}
	name := parts[0]
	raw, err := base64.StdEncoding.DecodeString(parts[2])
	if err != nil || len(raw) != 33 || (raw[0] != 0x04 && raw[0] != 0x01) {
		fail("witness key %q is not an Ed25519 key (type 0x04 or 0x01)", vkey)
	}
	// the vkey's own key ID is over its type; a cosignature/v1 line's is over 0x04
	own := sha256.Sum256(append([]byte(name+"\n"), raw...))
	if fmt.Sprintf("%x", own[:4]) != parts[1] {
		fail("witness key %q: key hash", vkey)
	}
	h := sha256.Sum256(append([]byte(name+"\n\x04"), raw[1:]...))
	for _, line := range strings.Split(text, "\n") {
		if !strings.HasPrefix(line, "\u2014 "+name+" ") {
			continue
		}
		sig, err := base64.StdEncoding.DecodeString(strings.TrimPrefix(line, "\u2014 "+name+" "))
		if err != nil || len(sig) != 4+8+64 || !bytes.Equal(sig[:4], h[:4]) {
			continue
		}
		ts := binary.BigEndian.Uint64(sig[4:12])
		msg := fmt.Sprintf("cosignature/v1\ntime %d\n%s", ts, body)
		if !ed25519.Verify(ed25519.PublicKey(raw[1:]), []byte(msg), sig[12:]) {
			fail("cosignature by %s does not verify", name)
		}
		fmt.Printf("cosigned by %s at %d\n", name, ts)
		return
	}
	fail("no cosignature by %s", name)
}

// checkNoteFile: -note FILE LOGVKEY [WITNESSVKEY...]: a cosigned checkpoint from a file, its
// extension lines (if any) part of the signed and cosigned text.
func checkNoteFile(args []string) {
	if len(args) < 2 {
		fail("usage: tlogclient -note FILE LOGVKEY [WITNESSVKEY...]")
	}
	text, err := os.ReadFile(args[0])
	if err != nil {
		fail("read %s: %v", args[0], err)
	}
	verifier, err := note.NewVerifier(args[1])
	if err != nil {
		fail("log key: %v", err)
	}
	n, err := note.Open(text, note.VerifierList(verifier))
	if err != nil {
		fail("checkpoint: %v", err)
	}
	lines := strings.Split(strings.TrimSuffix(n.Text, "\n"), "\n")
	if len(lines) < 3 || lines[0] != verifier.Name() {
		fail("checkpoint body %q", n.Text)
	}
	fmt.Printf("checkpoint %s size %s with %d extension line(s)\n", lines[0], lines[1], len(lines)-3)
	for _, w := range args[2:] {
		checkCosignature(w, n.Text, string(text))
	}
}

func main() {
	if len(os.Args) < 3 {
		fail("usage: tlogclient BASEURL LOGVKEY [-old SIZE:ROOT] [WITNESSVKEY...]")
	}
	if os.Args[1] == "-note" {
		checkNoteFile(os.Args[2:])
		return
	}
	base, vkey, rest := strings.TrimSuffix(os.Args[1], "/"), os.Args[2], os.Args[3:]
	verifier, err := note.NewVerifier(vkey)
	if err != nil {
		fail("log key: %v", err)
	}
	text := get(base + "/checkpoint")
	n, err := note.Open(text, note.VerifierList(verifier))
	if err != nil {
		fail("checkpoint: %v", err)
	}
	lines := strings.SplitN(n.Text, "\n", 4)
	if len(lines) != 4 || lines[0] != verifier.Name() {
		fail("checkpoint body %q", n.Text)
	}
	size, err := strconv.ParseInt(lines[1], 10, 64)
	if err != nil {
		fail("size %q", lines[1])
	}
	root, err := tlog.ParseHash(lines[2])
	if err != nil {
		fail("root %q", lines[2])
	}
	thr := tlog.TileHashReader(tlog.Tree{N: size, Hash: root}, reader{base, map[string][]byte{}})
	all := entries(base, size)
	for i, entry := range all {
		p, err := tlog.ProveRecord(size, int64(i), thr)
		if err != nil {
			fail("prove record %d: %v", i, err)
		}
		if err := tlog.CheckRecord(p, size, root, int64(i), tlog.RecordHash(entry)); err != nil {
			fail("record %d: %v", i, err)
		}
	}
	fmt.Printf("checkpoint %s size %d: %d entries proven\n", lines[0], size, len(all))
	for i := 0; i < len(rest); i++ {
		if rest[i] == "-old" && i+1 < len(rest) {
			old := strings.SplitN(rest[i+1], ":", 2)
			oldSize, _ := strconv.ParseInt(old[0], 10, 64)
			oldRoot, err := tlog.ParseHash(old[1])
			if err != nil {
				fail("old root %q", old[1])
			}
			p, err := tlog.ProveTree(size, oldSize, thr)
			if err != nil {
				fail("prove tree: %v", err)
			}
			if err := tlog.CheckTree(p, size, root, oldSize, oldRoot); err != nil {
				fail("tree of size %d does not extend size %d: %v", size, oldSize, err)
			}
			fmt.Printf("consistent with size %d\n", oldSize)
			i++
			continue
		}
		checkCosignature(rest[i], n.Text, string(text))
	}
}
