package dashboard

import (
	"math"
	"regexp"
	"strconv"
	"testing"
)

// cssColour matches a colour variable of the stylesheet's :root.
var cssColour = regexp.MustCompile(`--([a-z]+):\s*#([0-9a-fA-F]{6});`)

// The stylesheet's text colours keep a contrast of at least 4.5:1 (WCAG
// AA for body text) on the backgrounds they are used on.
func TestColoursContrast(t *testing.T) {
	css, err := staticFiles.ReadFile("static/dashboard.css")
	if err != nil {
		t.Fatal(err)
	}
	colours := map[string]string{}
	for _, m := range cssColour.FindAllStringSubmatch(string(css), -1) {
		colours[m[1]] = m[2]
	}
	for _, text := range []string{"fg", "muted", "link", "ok", "warn", "bad"} {
		for _, bg := range []string{"bg", "panel"} {
			fgHex, bgHex := colours[text], colours[bg]
			if fgHex == "" || bgHex == "" {
				t.Fatalf("the stylesheet lacks --%s or --%s", text, bg)
			}
			if ratio := contrast(fgHex, bgHex); ratio < 4.5 {
				t.Errorf("--%s (#%s) on --%s (#%s): contrast %.2f, want at least 4.5", text, fgHex, bg, bgHex, ratio)
			}
		}
	}
}

// contrast is WCAG 2's contrast ratio of two sRGB colours.
func contrast(a, b string) float64 {
	la, lb := luminance(a), luminance(b)
	return (math.Max(la, lb) + 0.05) / (math.Min(la, lb) + 0.05)
}

// luminance is WCAG 2's relative luminance of an sRGB colour "rrggbb".
func luminance(hex string) float64 {
	channel := func(i int) float64 {
		v, _ := strconv.ParseUint(hex[i:i+2], 16, 8)
		c := float64(v) / 255
		if c <= 0.03928 {
			return c / 12.92
		}
		return math.Pow((c+0.055)/1.055, 2.4)
	}
	return 0.2126*channel(0) + 0.7152*channel(2) + 0.0722*channel(4)
}

func TestContrast(t *testing.T) {
	for _, tt := range []struct {
		a, b string
		want float64
	}{{"000000", "ffffff", 21}, {"ffffff", "ffffff", 1}, {"777777", "ffffff", 4.48}} {
		if got := contrast(tt.a, tt.b); math.Abs(got-tt.want) > 0.01 {
			t.Errorf("contrast(%s, %s) = %.2f, want %.2f", tt.a, tt.b, got, tt.want)
		}
	}
}
