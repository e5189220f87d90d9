package scenario

import (
	"fmt"
	"html/template"
	"io"
	"math"
	"slices"
	"strings"
	"time"
)

// WriteHTML writes a self-contained report of the run: the summary, and
// plots (inline SVG) of allocation over time per resource, jobs waiting
// over time, and each queue's waits as a distribution.
func WriteHTML(w io.Writer, r *Result, s Summary) error {
	var text strings.Builder
	WriteText(&text, s)
	data := struct {
		Name, Summary       string
		Allocation, Pending template.HTML
		Waits, Models       template.HTML
		ModelTime           template.HTML
	}{Name: r.Name, Summary: text.String()}
	data.Allocation = allocationPlot(r)
	data.Pending = pendingPlot(r)
	data.Waits = waitPlot(r)
	data.Models = modelBars(s)
	data.ModelTime = modelPlot(r)
	return reportTemplate.Execute(w, data)
}

var reportTemplate = template.Must(template.New("report").Parse(`<!DOCTYPE html>
<html lang="en"><head><meta charset="utf-8"><title>{{.Name}}: simulation report</title>
<style>
body { font-family: system-ui, sans-serif; margin: 2em; color: #222; }
pre { background: #f6f6f6; padding: 1em; overflow-x: auto; }
svg { background: #fff; border: 1px solid #ddd; margin: 0.5em 0 1.5em; }
h2 { margin-top: 1.5em; }
</style></head><body>
<h1>{{.Name}}</h1>
<h2>Summary</h2>
<pre>{{.Summary}}</pre>
<h2>Allocation over time</h2>
{{.Allocation}}
<h2>Jobs waiting over time</h2>
{{.Pending}}
<h2>Waits per queue</h2>
{{.Waits}}
{{if .Models}}<h2>Utilization per GPU model</h2>
{{.Models}}
{{.ModelTime}}{{end}}
</body></html>
`))

// plot geometry.
const (
	plotW, plotH = 860, 300
	marginL      = 60
	marginB      = 40
	marginT      = 20
	marginR      = 160
)

var palette = []string{"#1f77b4", "#ff7f0e", "#2ca02c", "#d62728", "#9467bd", "#8c564b", "#e377c2", "#7f7f7f", "#bcbd22", "#17becf"}

// series is a named line of (x, y) points.
type series struct {
	name string
	x, y []float64
}

// linePlot draws series over x in [0, xMax] and y in [0, yMax].
func linePlot(title, xLabel, yLabel string, xMax, yMax float64, lines []series) template.HTML {
	var b strings.Builder
	innerW, innerH := float64(plotW-marginL-marginR), float64(plotH-marginT-marginB)
	if xMax <= 0 {
		xMax = 1
	}
	if yMax <= 0 {
		yMax = 1
	}
	px := func(x float64) float64 { return marginL + x/xMax*innerW }
	py := func(y float64) float64 { return marginT + innerH - y/yMax*innerH }
	fmt.Fprintf(&b, `<svg width="%d" height="%d" role="img" aria-label="%s">`, plotW, plotH, template.HTMLEscapeString(title))
	// Axes and ticks.
	fmt.Fprintf(&b, `<line x1="%d" y1="%.0f" x2="%.0f" y2="%.0f" stroke="#444"/>`, marginL, py(0), px(xMax), py(0))
	fmt.Fprintf(&b, `<line x1="%d" y1="%.0f" x2="%d" y2="%.0f" stroke="#444"/>`, marginL, py(0), marginL, py(yMax))
	for i := 0; i <= 4; i++ {
		y := yMax * float64(i) / 4
		fmt.Fprintf(&b, `<text x="%d" y="%.0f" font-size="11" text-anchor="end">%s</text>`, marginL-6, py(y)+4, short(y))
		fmt.Fprintf(&b, `<line x1="%d" y1="%.0f" x2="%.0f" y2="%.0f" stroke="#eee"/>`, marginL, py(y), px(xMax), py(y))
		x := xMax * float64(i) / 4
		fmt.Fprintf(&b, `<text x="%.0f" y="%.0f" font-size="11" text-anchor="middle">%s</text>`, px(x), py(0)+16, short(x))
	}
	fmt.Fprintf(&b, `<text x="%.0f" y="%d" font-size="12" text-anchor="middle">%s</text>`, px(xMax/2), plotH-6, template.HTMLEscapeString(xLabel))
	fmt.Fprintf(&b, `<text x="14" y="%.0f" font-size="12" text-anchor="middle" transform="rotate(-90 14 %.0f)">%s</text>`, py(yMax/2), py(yMax/2), template.HTMLEscapeString(yLabel))
	for i, l := range lines {
		color := palette[i%len(palette)]
		var pts strings.Builder
		for j := range l.x {
			fmt.Fprintf(&pts, "%.1f,%.1f ", px(l.x[j]), py(math.Min(l.y[j], yMax)))
		}
		fmt.Fprintf(&b, `<polyline fill="none" stroke="%s" stroke-width="1.5" points="%s"/>`, color, strings.TrimSpace(pts.String()))
		fmt.Fprintf(&b, `<text x="%d" y="%d" font-size="12" fill="%s">%s</text>`, plotW-marginR+10, marginT+14+16*i, color, template.HTMLEscapeString(l.name))
	}
	b.WriteString(`</svg>`)
	return template.HTML(b.String())
}

// short prints a tick value.
func short(v float64) string {
	switch {
	case v >= 1e6:
		return fmt.Sprintf("%.1fM", v/1e6)
	case v >= 1e4:
		return fmt.Sprintf("%.0fk", v/1e3)
	case v == math.Trunc(v):
		return fmt.Sprintf("%.0f", v)
	}
	return fmt.Sprintf("%.2g", v)
}

// hours is the run's x axis unit.
func hours(d time.Duration) float64 { return d.Hours() }

// downsample keeps at most n of the samples, evenly.
func downsample(samples []Sample, n int) []Sample {
	if len(samples) <= n {
		return samples
	}
	out := make([]Sample, 0, n)
	step := float64(len(samples)) / float64(n)
	for i := range n {
		out = append(out, samples[int(float64(i)*step)])
	}
	return append(out, samples[len(samples)-1])
}

func allocationPlot(r *Result) template.HTML {
	samples := downsample(r.Usage, 1500)
	var lines []series
	for _, name := range sortedKeys(r.Capacity) {
		c := r.Capacity[name]
		if c <= 0 || name == "pods" {
			continue
		}
		l := series{name: name}
		for _, s := range samples {
			l.x = append(l.x, hours(s.At))
			l.y = append(l.y, 100*s.Allocated[name]/c)
		}
		lines = append(lines, l)
	}
	if c := r.Capacity[r.GPU]; c > 0 {
		l := series{name: "stranded GPUs"}
		for _, s := range samples {
			l.x = append(l.x, hours(s.At))
			l.y = append(l.y, 100*s.StrandedGPU/c)
		}
		lines = append(lines, l)
	}
	return linePlot("allocation over time", "hours", "% of capacity allocated", hours(r.End), 100, lines)
}

func pendingPlot(r *Result) template.HTML {
	samples := downsample(r.Usage, 1500)
	l := series{name: "waiting"}
	var most float64
	for _, s := range samples {
		l.x = append(l.x, hours(s.At))
		l.y = append(l.y, float64(s.Pending))
		most = math.Max(most, float64(s.Pending))
	}
	return linePlot("jobs waiting", "hours", "jobs submitted, not started", hours(r.End), math.Max(most, 1), []series{l})
}

// waitPlot draws each queue's wait distribution: the share of its started
// jobs (y) that waited at most x hours.
func waitPlot(r *Result) template.HTML {
	byQueue := map[string][]float64{}
	var most float64
	for _, j := range r.Jobs {
		if j.Start >= 0 {
			w := hours(j.Start - j.Submit)
			byQueue[j.Queue] = append(byQueue[j.Queue], w)
			most = math.Max(most, w)
		}
	}
	var lines []series
	for _, q := range sortedKeys(byQueue) {
		v := byQueue[q]
		slices.Sort(v)
		l := series{name: q}
		step := max(1, len(v)/500)
		for i := 0; i < len(v); i += step {
			l.x = append(l.x, v[i])
			l.y = append(l.y, 100*float64(i+1)/float64(len(v)))
		}
		l.x = append(l.x, v[len(v)-1])
		l.y = append(l.y, 100)
		lines = append(lines, l)
	}
	return linePlot("waits", "wait (hours)", "% of started jobs", math.Max(most, 1.0/60), 100, lines)
}

// modelPlot draws each GPU model's allocation over time, as a share of
// the model's GPUs.
func modelPlot(r *Result) template.HTML {
	if len(r.ModelCapacity) == 0 {
		return ""
	}
	samples := downsample(r.Usage, 1500)
	var lines []series
	for _, m := range sortedKeys(r.ModelCapacity) {
		c := r.ModelCapacity[m]
		if c <= 0 {
			continue
		}
		l := series{name: m}
		for _, s := range samples {
			l.x = append(l.x, hours(s.At))
			l.y = append(l.y, 100*s.Models[m]/c)
		}
		lines = append(lines, l)
	}
	return linePlot("allocation per GPU model", "hours", "% of the model's GPUs allocated", hours(r.End), 100, lines)
}

// modelBars draws each GPU model's utilization as a bar.
func modelBars(s Summary) template.HTML {
	if len(s.ModelUtilization) == 0 {
		return ""
	}
	models := sortedKeys(s.ModelUtilization)
	var b strings.Builder
	h := marginT + 24*len(models) + 10
	fmt.Fprintf(&b, `<svg width="%d" height="%d" role="img" aria-label="utilization per GPU model">`, plotW, h)
	for i, m := range models {
		y := marginT + 24*i
		u := s.ModelUtilization[m]
		fmt.Fprintf(&b, `<text x="%d" y="%d" font-size="12" text-anchor="end">%s</text>`, marginL+40, y+14, template.HTMLEscapeString(m))
		fmt.Fprintf(&b, `<rect x="%d" y="%d" width="%.0f" height="18" fill="%s"/>`, marginL+50, y, u*float64(plotW-marginL-marginR), palette[i%len(palette)])
		fmt.Fprintf(&b, `<text x="%.0f" y="%d" font-size="12">%.1f%%</text>`, float64(marginL+56)+u*float64(plotW-marginL-marginR), y+14, 100*u)
	}
	b.WriteString(`</svg>`)
	return template.HTML(b.String())
}
