package chart

import (
	"bytes"
	"image/png"
	"os"
	"path/filepath"
	"testing"
)

func TestWritePNG(t *testing.T) {
	tests := []struct {
		name   string
		panels []Panel
		wantW  int
	}{
		{
			name: "one panel",
			panels: []Panel{{Title: "N=10, template change", Series: []Series{
				{Name: "DeploymentConfig", Points: []Point{{1, 1}, {2, 5}, {3, 10}}},
				{Name: "Deployment", Points: []Point{{2, 3}, {5, 10}}},
			}}},
			wantW: 576,
		},
		{
			name: "three panels wrap to two rows",
			panels: []Panel{
				{Title: "a", Series: []Series{{Name: "x", Points: []Point{{1, 1}}}}},
				{Title: "b", Series: []Series{{Name: "x", Points: []Point{{1, 1}}}}},
				{Title: "c", Series: []Series{{Name: "empty"}}},
			},
			wantW: 1152,
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			path := filepath.Join(t.TempDir(), "chart.png")
			if err := WritePNG(path, tt.panels); err != nil {
				t.Fatal(err)
			}
			data, err := os.ReadFile(path)
			if err != nil {
				t.Fatal(err)
			}
			img, err := png.Decode(bytes.NewReader(data))
			if err != nil {
				t.Fatalf("not a PNG: %v", err)
			}
			if w := img.Bounds().Dx(); w != tt.wantW {
				t.Errorf("width %d, want %d", w, tt.wantW)
			}
		})
	}
	if err := WritePNG(filepath.Join(t.TempDir(), "x.png"), nil); err == nil {
		t.Error("no panels: want an error")
	}
}
