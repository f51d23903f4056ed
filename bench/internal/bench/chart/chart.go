// Package chart draws the benchmark's PNG chart: rollouts completed over
// time, one panel per scenario, one line per system.
package chart

import (
	"fmt"
	"image/color"
	"os"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"
	"gonum.org/v1/plot/vg/vgimg"
)

// Point is one point of a line: after X seconds, Y rollouts were complete.
type Point struct{ X, Y float64 }

// Series is one line.
type Series struct {
	Name   string
	Points []Point
}

// Panel is one plot of the chart.
type Panel struct {
	Title  string
	Series []Series
}

// Panel sizes; the chart has two panels a row.
const (
	panelWidth  = 6 * vg.Inch
	panelHeight = 3.6 * vg.Inch
	columns     = 2
	dpi         = 96
)

// palette gives each series of a panel its color, in order: the same
// system has the same color in every panel.
func palette() []color.Color {
	return []color.Color{
		color.RGBA{R: 0xc0, G: 0x1c, B: 0x28, A: 0xff}, // DeploymentConfig
		color.RGBA{R: 0x1c, G: 0x5f, B: 0xc0, A: 0xff}, // Deployment
		color.RGBA{R: 0x2e, G: 0x8b, B: 0x57, A: 0xff},
		color.RGBA{R: 0x80, G: 0x80, B: 0x80, A: 0xff},
	}
}

// WritePNG draws the panels, two a row, into a PNG file at path.
func WritePNG(path string, panels []Panel) error {
	if len(panels) == 0 {
		return fmt.Errorf("no data to chart")
	}
	rows := (len(panels) + columns - 1) / columns
	cols := min(columns, len(panels))
	img := vgimg.NewWith(vgimg.UseWH(panelWidth*vg.Length(cols), panelHeight*vg.Length(rows)), vgimg.UseDPI(dpi))
	dc := draw.New(img)
	dc.Canvas.SetColor(color.White)
	tiles := draw.Tiles{Rows: rows, Cols: cols, PadX: vg.Millimeter * 4, PadY: vg.Millimeter * 4,
		PadTop: vg.Millimeter * 2, PadBottom: vg.Millimeter * 2, PadLeft: vg.Millimeter * 2, PadRight: vg.Millimeter * 2}
	for i, panel := range panels {
		p, err := newPlot(panel)
		if err != nil {
			return err
		}
		p.Draw(tiles.At(dc, i%cols, i/cols))
	}
	f, err := os.Create(path)
	if err != nil {
		return fmt.Errorf("writing the chart: %w", err)
	}
	_, werr := vgimg.PngCanvas{Canvas: img}.WriteTo(f)
	cerr := f.Close()
	if werr != nil || cerr != nil {
		return fmt.Errorf("writing the chart %s: %v %v", path, werr, cerr)
	}
	return nil
}

// newPlot makes one panel's plot.
func newPlot(panel Panel) (*plot.Plot, error) {
	p := plot.New()
	p.Title.Text = panel.Title
	p.X.Label.Text = "seconds"
	p.Y.Label.Text = "rollouts complete"
	p.X.Min, p.Y.Min = 0, 0
	p.Add(plotter.NewGrid())
	p.Legend.Top, p.Legend.Left = true, true
	colors := palette()
	for i, s := range panel.Series {
		xys := make(plotter.XYs, 0, len(s.Points)+1)
		xys = append(xys, plotter.XY{})
		for _, pt := range s.Points {
			xys = append(xys, plotter.XY{X: pt.X, Y: pt.Y})
		}
		line, err := plotter.NewLine(xys)
		if err != nil {
			return nil, fmt.Errorf("charting %s: %w", s.Name, err)
		}
		line.Color = colors[i%len(colors)]
		line.Width = vg.Points(1.5)
		line.StepStyle = plotter.PostStep
		p.Add(line)
		p.Legend.Add(s.Name, line)
	}
	return p, nil
}
