package report

import (
	"flag"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/quasim/quasim/internal/browsertest"
)

var (
	screenshots = flag.String("screenshots", "", "write a PNG of each view of the fixture report (or of -report) into this directory")
	reportFile  = flag.String("report", "", "with -screenshots: the report file to draw instead of the fixture")
	jobAnchor   = flag.String("job", "job-1", "with -screenshots: the anchor of the job whose views are drawn")
)

// The crowded fixture report renders every chart and table, quietly and
// offline, and passes pageChecks (as laid out by the browser).
func TestBrowserFixture(t *testing.T) {
	page := render(t, crowdedFixture())
	r, _ := browsertest.Open(t, strings.Replace(page, "</body>", pageChecks(1)+"</body>", 1))
	if got, want := len(r.Charts), len(charts(page)); got != want || got < 8 {
		t.Errorf("%d charts rendered, the page has %d", got, want)
	}
	if len(r.Tables) != 12 { // the jobs with trials: 4 of sgemm, 8 of the stencil
		t.Errorf("%d trial tables rendered, want 12", len(r.Tables))
	}
}

// pageChecks reports on the console (which browsertest.Open fails on)
// what a reader of the laid-out page would miss:
//
//   - legend: a chart whose legend does not label every series it
//     declares, or an entry cut off at the chart's edges or drawn over
//     another entry.
//   - unmeasured: the jobs with nothing measured are not listed after the
//     others in the jobs view, a row without its reason shown, or a job
//     section (of empty views) drawn for one.
//   - roofs: a roofline row placed against a cache level whose roof the
//     chart does not draw and label, or no row placed against a cache
//     level at all.
//   - two parameters: sgemm 256's heat map without its 4 × 3 cells of
//     bx and by (each with a time as its title), or its parallel
//     coordinates without an axis per parameter and the time's, or
//     either drawn outside its chart.
//   - served: not flags served-versus-certificate disagreements in the
//     jobs table, each with its reason as a title, and as many sentences
//     in the job sections (convergence and certificates), all shown.
func pageChecks(flags int) string {
	return strings.ReplaceAll(pageChecksJS, "FLAGS", strconv.Itoa(flags))
}

const pageChecksJS = `<script>(function(){
function fail(m){console.error(m)}
function inside(a,b){return a.x>=b.x-0.5&&a.y>=b.y-0.5&&a.x+a.width<=b.x+b.width+0.5&&a.y+a.height<=b.y+b.height+0.5}
function overlap(a,b){return a.x<b.x+b.width-0.5&&b.x<a.x+a.width-0.5&&a.y<b.y+b.height-0.5&&b.y<a.y+a.height-0.5}
document.querySelectorAll("svg.chart").forEach(function(s){
var vb=s.viewBox.baseVal,box={x:0,y:0,width:vb.width,height:vb.height};
var es=s.querySelectorAll("text.legend"),boxes=[];
if(es.length!==+s.getAttribute("data-series")){fail("legend check: chart "+s.id+" labels "+es.length+" of "+s.getAttribute("data-series")+" series")}
es.forEach(function(e){var b=e.getBBox(),n=e.textContent;
if(n.trim()===""){fail("legend check: chart "+s.id+": a series has no label")}
if(!inside(b,box)){fail("legend check: chart "+s.id+": entry "+n+" cut off: "+JSON.stringify([b.x,b.y,b.width,b.height])+" in "+vb.width+"x"+vb.height)}
boxes.forEach(function(o){if(overlap(o.b,b)){fail("legend check: chart "+s.id+": "+o.n+" and "+n+" overlap")}});
boxes.push({b:b,n:n})})});
var cells=document.querySelectorAll("#summary td.served-flag"),notes=document.querySelectorAll("section.job p.served-flag");
if(cells.length!==FLAGS||notes.length!==2*FLAGS){fail("served check: "+cells.length+" flagged jobs and "+notes.length+" flag notes, want FLAGS and "+2*FLAGS)}
cells.forEach(function(c){if(!c.title||c.getBoundingClientRect().width===0){fail("served check: a flag without its reason or not shown")}});
notes.forEach(function(n){var r=n.getBoundingClientRect();if(r.width===0||r.height===0||!/disagree/.test(n.textContent)){fail("served check: a flag note not shown")}});
var rows=document.querySelectorAll("#summary table.unmeasured tbody tr"),tables=document.querySelectorAll("#summary table");
if(rows.length===0||tables[tables.length-1].className.indexOf("unmeasured")<0){fail("unmeasured check: "+rows.length+" jobs with nothing measured, not listed last")}
rows.forEach(function(r){var w=r.querySelector("td.why"),b=w&&w.getBoundingClientRect();
if(!w||w.textContent.length<10||b.width===0||b.height===0){fail("unmeasured check: job "+r.id+" without its reason shown")}
if(document.querySelector("section.job#"+r.id)){fail("unmeasured check: job "+r.id+" has a section of empty views")}});
var roofRows=document.querySelectorAll("#roofline table.roofs tr[data-roof]"),inCache=0;
var labels=Array.prototype.map.call(document.querySelectorAll("#roofline-chart text.legend"),function(t){return t.textContent});
roofRows.forEach(function(r){var l=r.getAttribute("data-roof");if(l==="memory"){return}inCache++;
var g=document.querySelector('#roofline-chart g.series[data-name^="'+l+' roof"]');
if(!g||g.getBBox().width===0||!labels.some(function(t){return t.indexOf(l+" roof")===0})){fail("roofs check: "+l+" roof not drawn and labelled")}
if(r.children[3].textContent.indexOf(l)!==0){fail("roofs check: a row against "+l+" does not name it")}});
if(inCache===0){fail("roofs check: no job placed against a cache level")}
var hm=document.getElementById("job-1-heatmap"),pc=document.getElementById("job-1-parallel");
if(!hm||!pc){fail("two-parameter check: views of job-1 missing")}else{
var cells=hm.querySelectorAll('g.series[data-name="best time of the pair"] rect,g.series[data-name="not measured"] rect');
if(cells.length!==12){fail("two-parameter check: "+cells.length+" heat map cells, want 12")}
cells.forEach(function(c){if(!/ms|no valid trial/.test(c.textContent)){fail("two-parameter check: a cell without its time")}});
var names=Array.prototype.map.call(pc.querySelectorAll("text.axis"),function(t){return t.textContent}).join(",");
if(names!=="bx,by,kind,time (ms)"){fail("two-parameter check: parallel axes "+names)}
[hm,pc].forEach(function(s){var o=s.getBoundingClientRect();
s.querySelectorAll("g.series,text").forEach(function(g){var r=g.getBoundingClientRect();if(r.left<o.left-0.5||r.top<o.top-0.5||r.right>o.right+0.5||r.bottom>o.bottom+0.5){fail("two-parameter check: "+s.id+": "+(g.getAttribute("data-name")||g.textContent)+" outside the chart")}})})}
})();</script>`

// TestScreenshots writes a PNG of each view of the fixture report, or of
// the report file -report, with -screenshots DIR (make screenshots).
func TestScreenshots(t *testing.T) {
	if *screenshots == "" {
		t.Skip("no -screenshots DIR")
	}
	bin := browsertest.Chromium(t)
	rec := browsertest.NewRecorder(t)
	if err := os.MkdirAll(*screenshots, 0o755); err != nil {
		t.Fatal(err)
	}
	page, prefix := render(t, crowdedFixture()), "fixture"
	if *reportFile != "" {
		b, err := os.ReadFile(*reportFile)
		if err != nil {
			t.Fatal(err)
		}
		page, prefix = string(b), strings.TrimSuffix(filepath.Base(*reportFile), filepath.Ext(*reportFile))
	}
	browsertest.Shoot(t, bin, rec, page, *screenshots, prefix, *jobAnchor)
}

// BenchmarkOpen opens the report file -report in headless Chromium, as
// TestBrowserFixture checks a page, and reports the time from navigation
// to a page ready to read (charts laid out, trial tables rendered;
// page-ms) beside the whole Chromium run (ns/op, with the browser's start
// and exit):
//
//	go test ./report -run '^$' -bench Open -benchtime 5x -report report.html
func BenchmarkOpen(b *testing.B) {
	if *reportFile == "" {
		b.Skip("no -report FILE")
	}
	page, err := os.ReadFile(*reportFile)
	if err != nil {
		b.Fatal(err)
	}
	var ms float64
	for b.Loop() {
		r, _ := browsertest.Open(b, string(page))
		ms += r.OpenMs
	}
	b.ReportMetric(ms/float64(b.N), "page-ms")
	b.ReportMetric(float64(len(page)), "bytes")
}

// The bench page renders every curve, quietly and offline.
func TestBrowserBench(t *testing.T) {
	var b strings.Builder
	if err := WriteBench(&b, benchFixture()); err != nil {
		t.Fatal(err)
	}
	if r, _ := browsertest.Open(t, b.String()); len(r.Charts) != 2 {
		t.Errorf("%d charts rendered, want 2", len(r.Charts))
	}
}

// sortCheck clicks the time_ms heading of the first trial table twice and
// reports on the console (an error the browser check fails on) a page of
// rows out of order: ascending, then descending, empty cells last both
// ways; and that the at column shows UTC date-times.
const sortCheck = `<script>(function(){
function fail(m){console.error("sort check: "+m)}
var host=document.querySelector(".trials-table");if(!host){fail("no table");return}
var ths=host.querySelectorAll("th"),col=-1;
for(var i=0;i<ths.length;i++){if(ths[i].textContent==="time_ms"){col=i}}
if(col<0){fail("no time_ms column");return}
function cells(){var out=[];host.querySelectorAll("tbody tr").forEach(function(tr){out.push(tr.children[col].textContent)});return out}
function ordered(dir){var c=cells(),empty=false,prev=null,n=0;
for(var i=0;i<c.length;i++){if(c[i]===""){empty=true;continue}
if(empty){fail("a time after an empty cell ("+dir+"): "+c.join(" "));return}
var v=Number(c[i]);if(prev!==null&&dir*(v-prev)<0){fail("out of order ("+dir+"): "+c.join(" "));return}prev=v;n++}
if(n===0){fail("no times")}}
ths[col].click();ordered(1);ths[col].click();ordered(-1);
var at=-1;for(var i=0;i<ths.length;i++){if(ths[i].textContent==="at"){at=i}}
var first=host.querySelector("tbody tr").children[at].textContent;
if(!/^\d{4}-\d\d-\d\d \d\d:\d\d:\d\d$/.test(first)){fail("at shows "+first)}
var rows=document.querySelectorAll("#summary table.unmeasured tbody tr"),tables=document.querySelectorAll("#summary table");
if(rows.length===0||tables[tables.length-1].className.indexOf("unmeasured")<0){fail("unmeasured check: "+rows.length+" jobs with nothing measured, not listed last")}
rows.forEach(function(r){var w=r.querySelector("td.why"),b=w&&w.getBoundingClientRect();
if(!w||w.textContent.length<10||b.width===0||b.height===0){fail("unmeasured check: job "+r.id+" without its reason shown")}
if(document.querySelector("section.job#"+r.id)){fail("unmeasured check: job "+r.id+" has a section of empty views")}});
var roofRows=document.querySelectorAll("#roofline table.roofs tr[data-roof]"),inCache=0;
var labels=Array.prototype.map.call(document.querySelectorAll("#roofline-chart text.legend"),function(t){return t.textContent});
roofRows.forEach(function(r){var l=r.getAttribute("data-roof");if(l==="memory"){return}inCache++;
var g=document.querySelector('#roofline-chart g.series[data-name^="'+l+' roof"]');
if(!g||g.getBBox().width===0||!labels.some(function(t){return t.indexOf(l+" roof")===0})){fail("roofs check: "+l+" roof not drawn and labelled")}
if(r.children[3].textContent.indexOf(l)!==0){fail("roofs check: a row against "+l+" does not name it")}});
if(inCache===0){fail("roofs check: no job placed against a cache level")}
var hm=document.getElementById("job-1-heatmap"),pc=document.getElementById("job-1-parallel");
if(!hm||!pc){fail("two-parameter check: views of job-1 missing")}else{
var cells=hm.querySelectorAll('g.series[data-name="best time of the pair"] rect,g.series[data-name="not measured"] rect');
if(cells.length!==12){fail("two-parameter check: "+cells.length+" heat map cells, want 12")}
cells.forEach(function(c){if(!/ms|no valid trial/.test(c.textContent)){fail("two-parameter check: a cell without its time")}});
var names=Array.prototype.map.call(pc.querySelectorAll("text.axis"),function(t){return t.textContent}).join(",");
if(names!=="bx,by,kind,time (ms)"){fail("two-parameter check: parallel axes "+names)}
[hm,pc].forEach(function(s){var o=s.getBoundingClientRect();
s.querySelectorAll("g.series,text").forEach(function(g){var r=g.getBoundingClientRect();if(r.left<o.left-0.5||r.top<o.top-0.5||r.right>o.right+0.5||r.bottom>o.bottom+0.5){fail("two-parameter check: "+s.id+": "+(g.getAttribute("data-name")||g.textContent)+" outside the chart")}})})}
})();</script>`

// The trial table sorts by a column both ways, empty cells last.
func TestBrowserSort(t *testing.T) {
	page := strings.Replace(render(t, fixture()), "</body>", sortCheck+"</body>", 1)
	browsertest.Open(t, page)
}
