package imagebuild

import (
	"archive/tar"
	"bytes"
	"compress/gzip"
	"fmt"
	"io"
	"path"
	"sort"
	"strings"
	"time"

	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/types"
)

// epoch is every file's modification time and the images' creation time:
// a fixed time keeps digests reproducible.
var epoch = time.Unix(0, 0).UTC()

// entry is one file, directory or symbolic link of a layer.
type entry struct {
	// path is relative to the root, without a leading slash.
	path string
	mode int64
	// data is a regular file's content.
	data []byte
	// link is a symbolic link's target; dir marks a directory.
	link string
	dir  bool
	// owner is the uid and gid; 0 (root) unless set.
	owner int
}

// fileEntry is a regular file.
func fileEntry(p string, mode int64, data []byte) entry {
	return entry{path: p, mode: mode, data: data}
}

// symlinkEntry is a symbolic link to target.
func symlinkEntry(p, target string) entry {
	return entry{path: p, mode: 0o777, link: target}
}

// dirEntry is a directory.
func dirEntry(p string, mode int64) entry {
	return entry{path: p, mode: mode, dir: true}
}

// withParents adds a 0755 directory entry for every missing parent of the
// entries, and sorts them by path, so a parent comes before its children.
func withParents(entries []entry) []entry {
	seen := map[string]bool{}
	for _, e := range entries {
		seen[e.path] = true
	}
	all := append([]entry(nil), entries...)
	for _, e := range entries {
		for dir := path.Dir(e.path); dir != "." && dir != "/" && !seen[dir]; dir = path.Dir(dir) {
			seen[dir] = true
			all = append(all, dirEntry(dir, 0o755))
		}
	}
	sort.Slice(all, func(i, j int) bool { return all[i].path < all[j].path })
	return all
}

// buildLayer writes entries as a gzipped tar layer with fixed times and
// owners: the same entries always give the same digest.
func buildLayer(entries []entry) (v1.Layer, error) {
	var tarBuf bytes.Buffer
	if err := writeTar(&tarBuf, withParents(entries)); err != nil {
		return nil, err
	}
	var gzBuf bytes.Buffer
	// No name and no time in the gzip header, and a fixed level: the
	// fastest, since compressing is most of the build's time and the
	// default level saves only about a tenth of the size.
	zw, err := gzip.NewWriterLevel(&gzBuf, gzip.BestSpeed)
	if err != nil {
		return nil, err
	}
	if _, err := zw.Write(tarBuf.Bytes()); err != nil {
		return nil, fmt.Errorf("compress the layer: %w", err)
	}
	if err := zw.Close(); err != nil {
		return nil, fmt.Errorf("compress the layer: %w", err)
	}
	return newMemLayer(tarBuf.Bytes(), gzBuf.Bytes())
}

// memLayer is a layer held in memory, tar and gzip both: its digests are
// computed once, and reading it never decompresses.
type memLayer struct {
	tar, gz        []byte
	diffID, digest v1.Hash
}

// newMemLayer hashes the two forms of a layer.
func newMemLayer(tarData, gzData []byte) (*memLayer, error) {
	diffID, _, err := v1.SHA256(bytes.NewReader(tarData))
	if err != nil {
		return nil, fmt.Errorf("hash the layer: %w", err)
	}
	digest, _, err := v1.SHA256(bytes.NewReader(gzData))
	if err != nil {
		return nil, fmt.Errorf("hash the layer: %w", err)
	}
	return &memLayer{tar: tarData, gz: gzData, diffID: diffID, digest: digest}, nil
}

// Digest implements v1.Layer.
func (l *memLayer) Digest() (v1.Hash, error) { return l.digest, nil }

// DiffID implements v1.Layer.
func (l *memLayer) DiffID() (v1.Hash, error) { return l.diffID, nil }

// Compressed implements v1.Layer.
func (l *memLayer) Compressed() (io.ReadCloser, error) {
	return io.NopCloser(bytes.NewReader(l.gz)), nil
}

// Uncompressed implements v1.Layer.
func (l *memLayer) Uncompressed() (io.ReadCloser, error) {
	return io.NopCloser(bytes.NewReader(l.tar)), nil
}

// Size implements v1.Layer.
func (l *memLayer) Size() (int64, error) { return int64(len(l.gz)), nil }

// MediaType implements v1.Layer.
func (l *memLayer) MediaType() (types.MediaType, error) { return types.OCILayer, nil }

// writeTar writes sorted entries to w.
func writeTar(w io.Writer, entries []entry) error {
	tw := tar.NewWriter(w)
	for _, e := range entries {
		hdr := &tar.Header{
			Name:    e.path,
			Mode:    e.mode,
			Uid:     e.owner,
			Gid:     e.owner,
			ModTime: epoch,
			Format:  tar.FormatUSTAR,
		}
		switch {
		case e.dir:
			hdr.Typeflag, hdr.Name = tar.TypeDir, e.path+"/"
		case e.link != "":
			hdr.Typeflag, hdr.Linkname = tar.TypeSymlink, e.link
		default:
			hdr.Typeflag, hdr.Size = tar.TypeReg, int64(len(e.data))
		}
		if err := tw.WriteHeader(hdr); err != nil {
			return fmt.Errorf("write %s to the layer: %w", e.path, err)
		}
		if _, err := tw.Write(e.data); err != nil {
			return fmt.Errorf("write %s to the layer: %w", e.path, err)
		}
	}
	return tw.Close()
}

// passwd and group know root and the non-root user the images run as, so
// tools that look the user up find a name and a home.
const (
	passwd = "root:x:0:0:root:/root:/sbin/nologin\nnonroot:x:65532:65532:nonroot:/home/nonroot:/sbin/nologin\n"
	group  = "root:x:0:\nnonroot:x:65532:\n"
)

// baseEntries are the files every image has besides its program.
func baseEntries() []entry {
	return []entry{
		fileEntry("etc/passwd", 0o644, []byte(passwd)),
		fileEntry("etc/group", 0o644, []byte(group)),
		dirEntry("tmp", 0o1777),
		{path: "home/nonroot", mode: 0o700, dir: true, owner: nonRootID},
	}
}

// nonRootID is the uid and gid the images run as.
const nonRootID = 65532

// trimSlash makes an absolute image path relative to the layer's root.
func trimSlash(p string) string { return strings.TrimPrefix(p, "/") }
