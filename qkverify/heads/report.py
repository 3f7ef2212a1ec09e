"""``report.html``: every certified head of one or more models in the browser.

One self-contained page (plotly's script embedded, no network needed; plotly.js's
"Share chart" button, which uploads the data to Plotly Cloud, is switched off):

* every head on the simplex of its profile -- (b, c, d)/(1 − a), the profile
  of S (Lemma 4), in a ternary plot with corners b (α = β), c (S ⪰ 0) and
  d (S ⪯ 0) as in ``heads.png`` -- coloured by the skew energy a on a
  diverging scale centred on the random baseline a₀ = (N − 1)/(2N) (Prop 5);
* the marker's shape says what was decided exactly: a face c = 0, d = 0
  (both: α = β), b = 0, or an order α_j vs β_j left undecided (then c and d
  have no certified value and the point is placed by the float64 figures);
  markers are not clipped by the triangle (heads on a corner or an edge are
  the exactly decided ones); a head with L = 0 has no point (Lean's
  π(0) = (0, 0, 0, 0) is not on the simplex): it is counted, said so, and
  listed in the table with its exact zeros;
* hovering shows layer, head, kv_head, a (exact), b, c, d with their
  evidence (exact 0 on a decided face, else the certified interval), the
  signature, and the float64 pipeline's figures beside them; clicking opens
  the head's certificate (a relative link, so the folder can be moved);
* a layer filter, a model selector (several models or a survey), and a
  sortable, paged table of all heads below the plot; the page's address may
  carry ``#model=K&layer=L`` (and ``hover=I``, a head's index) to open a view;
* optionally a section of ``qkverify compare`` (an audited published table).

The data are embedded column-wise (no repeated keys) and the hover texts
and table rows are built in the browser, so a 9,512-head survey stays a
few megabytes beside plotly's script (see :func:`page_size_estimate`).
Floats are display values only; the exact values are in the certificates.
"""

from __future__ import annotations

import json
from pathlib import Path

#: the element the page fills with its self-check (markers drawn, errors seen)
STATUS_ID = "qk-status"


def _f(x, sig: int = 7):
    """A float rounded to ``sig`` significant digits for display, or None."""
    if x in (None, "") or isinstance(x, bool):
        return None
    try:
        v = float(x)
    except (TypeError, ValueError):
        return None
    if v != v:
        return None
    return float(f"{v:.{sig}g}")


def _face(v) -> str:
    return "T" if v is True else "F" if v is False else "?" if v == "undecided" else "-"


def model_data(rows: list[dict], name: str, N: int, n: int, cert_prefix: str = "",
               certificates: bool = True, meta: dict | None = None) -> dict:
    """The page data of one model, column-wise.

    rows         -- the ``heads`` table rows (:data:`qkverify.heads.output.COLUMNS` keys)
    cert_prefix  -- path of the model's certificates relative to report.html ('' or 'model/')
    certificates -- whether LxxHyy.json files were written (links)
    """
    cols: dict = {k: [] for k in ("layer", "head", "kv", "a", "a_den", "b", "c", "d", "b_lo", "b_hi", "c_lo", "c_hi",
                                  "d_lo", "d_hi", "faces", "n_pos", "n_neg", "f_a", "f_b", "f_c", "f_d", "f_flags",
                                  "se_up", "rank")}
    for r in rows:
        cols["layer"].append(int(r["layer"]))
        cols["head"].append(int(r["head"]))
        cols["kv"].append(int(r.get("kv_head", r["head"])))
        cols["a"].append(_f(r.get("a"), 12))
        ax = str(r.get("a_exact") or "")
        cols["a_den"].append(len(ax.split("/")[1]) if "/" in ax else (0 if ax else -1))
        for k in "bcd":
            cols[k].append(_f(r.get(k)))
            cols[f"{k}_lo"].append(str(r.get(f"{k}_lo") or ""))
            cols[f"{k}_hi"].append(str(r.get(f"{k}_hi") or ""))
        # L = 0 (the producer gives no a): Lean's π(0) = (0, 0, 0, 0) (x/0 = 0), no point on the simplex
        zero = r.get("a_exact") in (None, "") and r.get("a") in (None, "")
        cols["faces"].append("ZZZ" if zero else
                             _face(r.get("face_b0")) + _face(r.get("face_c0")) + _face(r.get("face_d0")))
        cols["n_pos"].append(r.get("n_pos"))
        cols["n_neg"].append(r.get("n_neg"))
        for k in "abcd":
            cols[f"f_{k}"].append(_f(r.get(f"float64_{k}"), 6))
        cols["f_flags"].append(str(r.get("float64_flags") or ""))
        up = r.get("energy_above_baseline")
        cols["se_up"].append(1 if up is True else 0 if up is False else -1)
        cols["rank"].append(r.get("rank_M"))
    return {"name": name, "N": int(N), "n": int(n), "baseline": (N - 1) / (2 * N) if N else 0.5,
            "cert_prefix": cert_prefix, "certificates": bool(certificates), "heads": len(rows),
            "score": (meta or {}).get("score") or "", "cols": cols}


def render(models: list[dict], title: str, compare: dict | None = None) -> str:
    """The page (a str of HTML) for ``models`` (each from :func:`model_data`)
    and an optional compare section (:func:`qkverify.compare.report_section`)."""
    from plotly.offline import get_plotlyjs

    data = {"title": title, "models": models, "compare": compare, "status_id": STATUS_ID}
    blob = json.dumps(data, ensure_ascii=False, separators=(",", ":"), allow_nan=False)
    blob = blob.replace("<", "\\u003c")          # no '</script' or '<!--' can reach the HTML parser
    esc = title.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")
    return (_TEMPLATE.replace("%%TITLE%%", esc)
            .replace("%%PLOTLY%%", get_plotlyjs().replace("</script", "<\\/script"))
            .replace("%%DATA%%", blob)
            .replace("%%APP%%", _APP)
            .replace("%%CSS%%", _CSS))


def write_report(path: str | Path, models: list[dict], title: str, compare: dict | None = None) -> Path:
    """Write the page atomically; returns its path."""
    from ..io.outputs import atomic_write_bytes

    p = Path(path)
    p.parent.mkdir(parents=True, exist_ok=True)
    atomic_write_bytes(p, render(models, title, compare).encode("utf-8"))
    return p


def page_size_estimate(n_heads: int, n_layers: int = 40, n_models: int = 14) -> int:
    """Bytes of a page of ``n_heads`` synthetic heads (the size test and the README's figure)."""
    import random

    rnd = random.Random(0)
    per = max(1, n_heads // n_models)
    models, left = [], n_heads
    for k in range(n_models):
        cnt = per if k < n_models - 1 else left
        left -= cnt
        rows = []
        for i in range(cnt):
            x = [rnd.random() for _ in range(4)]
            s = sum(x)
            a, b, c, d = (v / s for v in x)
            rows.append({"layer": i % n_layers, "head": i // n_layers, "kv_head": i // n_layers, "a": a,
                         "a_exact": f"{rnd.getrandbits(160)}/{rnd.getrandbits(164)}", "b": b, "c": c, "d": d,
                         **{f"{k}_{e}": f"{v:.15g}" for k, v in (("b", b), ("c", c), ("d", d)) for e in ("lo", "hi")},
                         "face_b0": False, "face_c0": False, "face_d0": False, "n_pos": 64, "n_neg": 64,
                         "float64_a": a, "float64_b": b, "float64_c": c, "float64_d": d, "float64_flags": "",
                         "energy_above_baseline": True, "rank_M": 128})
        models.append(model_data(rows, f"model-{k}", 4096, 64, f"model-{k}/"))
    return len(render(models, "size estimate").encode("utf-8"))


_CSS = r"""
body{font-family:system-ui,-apple-system,"Segoe UI",Roboto,sans-serif;margin:0;color:#1d1d1f;background:#fafafa}
header{padding:14px 24px 6px;background:#fff;border-bottom:1px solid #ddd}
h1{font-size:20px;margin:0 0 4px} h2{font-size:17px;margin:22px 0 8px}
.sub{color:#555;font-size:13px;line-height:1.45}
main{padding:10px 24px 40px;max-width:1500px}
.controls{display:flex;gap:18px;align-items:center;flex-wrap:wrap;margin:10px 0;font-size:14px}
.controls select{font-size:14px;padding:2px 4px}
#plot{width:100%;height:640px;background:#fff;border:1px solid #e3e3e3;border-radius:4px}
.legend-note{font-size:12.5px;color:#444;margin:6px 0 0;line-height:1.5}
table{border-collapse:collapse;font-size:12.5px;background:#fff;width:100%}
th,td{border:1px solid #e2e2e2;padding:3px 6px;text-align:right;white-space:nowrap}
td.l,th.l{text-align:left;white-space:normal}
th{background:#f0f0f3;cursor:pointer;user-select:none;position:sticky;top:0}
th.sorted-asc::after{content:" ▲"} th.sorted-desc::after{content:" ▼"}
tr:hover td{background:#f5f8ff}
.pager{font-size:13px;margin:6px 0;display:flex;gap:10px;align-items:center}
.pager button{font-size:13px}
.exact{color:#0a6b2d} .undec{color:#b25b00;font-weight:600} .bad{color:#b00020;font-weight:600}
.pill{display:inline-block;border-radius:9px;padding:0 7px;font-size:12px;background:#eee}
.summary td,.summary th{text-align:right} .summary td:first-child,.summary th:first-child,.summary td.l,.summary th.l{text-align:left}
#qk-status{display:none}
"""

_TEMPLATE = r"""<!DOCTYPE html>
<html lang="en"><head><meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>%%TITLE%%</title>
<style>%%CSS%%</style>
<script>
window.__qkErrors=[];
window.addEventListener("error",function(e){window.__qkErrors.push(String(e.message||e));});
window.addEventListener("unhandledrejection",function(e){window.__qkErrors.push("promise: "+String(e.reason));});
(function(){var ce=console.error;console.error=function(){window.__qkErrors.push(Array.prototype.join.call(arguments," "));return ce.apply(console,arguments);};})();
</script>
<script>%%PLOTLY%%</script>
</head><body>
<header><h1 id="title"></h1><div class="sub" id="subtitle"></div></header>
<main>
<div class="controls">
  <label id="model-box">model <select id="model"></select></label>
  <label>layer <select id="layer"></select></label>
  <label><input type="checkbox" id="whole"> whole simplex (default: zoomed to the heads)</label>
  <span class="sub" id="counts"></span>
</div>
<div class="sub" id="plot-caption">(b, c, d)/(1 − a) — the profile of S (Lemma 4) — on the simplex; colour: the skew energy a against the random baseline a₀ = (N−1)/(2N)</div>
<div id="plot"></div>
<p class="legend-note" id="legend-note"></p>
<h2>All heads</h2>
<div class="pager" id="pager"></div>
<div style="max-height:560px;overflow:auto"><table id="heads"></table></div>
<section id="compare"></section>
<pre id="qk-status"></pre>
</main>
<script id="qk-data" type="application/json">%%DATA%%</script>
<script>%%APP%%</script>
</body></html>
"""

_APP = r"""
"use strict";
var D = JSON.parse(document.getElementById("qk-data").textContent);
var state = {m: 0, layer: "all", sort: ["layer", 1], page: 0, per: 200};
function esc(s){return String(s).replace(/&/g,"&amp;").replace(/</g,"&lt;").replace(/>/g,"&gt;");}
function fmt(x,k){ if(x===null||x===undefined||x==="") return "—"; return Number(x).toPrecision(k||6).replace(/(\.\d*?)0+(e|$)/,"$1$2").replace(/\.(e|$)/,"$1"); }
function certHref(M,i){ if(!M.certificates) return null; var c=M.cols; var p=function(v){return (v<10?"0":"")+v;};
  return M.cert_prefix+"L"+p(c.layer[i])+"H"+p(c.head[i])+".json"; }
function category(f){ // f = faces "b c d": T/F/?/-, or "ZZZ" for L = 0
  if(f[0]==="Z") return "zero";
  if(f[1]==="?"||f[2]==="?") return "undecided";
  if(f[0]==="T") return "b0"; if(f[1]==="T"&&f[2]==="T") return "cd0";
  if(f[1]==="T") return "c0"; if(f[2]==="T") return "d0"; return "none"; }
var CATS = [
  ["none","circle","no face decided (c > 0 and d > 0, certified)"],
  ["c0","diamond","face c = 0 decided exactly (β_j ≥ α_j for all j)"],
  ["d0","square","face d = 0 decided exactly (α_j ≥ β_j for all j)"],
  ["cd0","star","c = d = 0 exactly (α = β)"],
  ["b0","triangle-up","b = 0 exactly (S semidefinite)"],
  ["undecided","x-open","order α_j vs β_j undecided (placed by float64)"]];
//: L = 0: π(0) = (0, 0, 0, 0) by Lean's x/0 = 0 -- not a point of the simplex, so not drawn (listed in the table)
var ZERO_NOTE = "L = 0: π(0) = (0, 0, 0, 0) exactly (Lean's x/0 = 0), not on the simplex";
function coord(M,i){ var c=M.cols, a=c.a[i];
  var b=c.b[i], cc=c.c[i], d=c.d[i], fl=false;
  if(cc===null||d===null||b===null){ b=c.f_b[i]; cc=c.f_c[i]; d=c.f_d[i]; fl=true; }
  var s=(b||0)+(cc||0)+(d||0); if(!(s>0)) return [0,1,0,fl];
  return [(d||0)/s,(b||0)/s,(cc||0)/s,fl]; }
function evid(M,i,k){ var c=M.cols, f=c.faces[i];
  var face = k==="c"?f[1]:k==="d"?f[2]:f[0];
  if(face==="T") return "<b>0</b> (exact face)";
  var lo=c[k+"_lo"][i], hi=c[k+"_hi"][i];
  if(lo==="") return "<i>undecided</i>";
  return "["+lo+", "+hi+"] (certified)"; }
function hover(M,i){ var c=M.cols;
  var sig = "("+c.n_pos[i]+", "+c.n_neg[i]+", "+(M.N-c.n_pos[i]-c.n_neg[i])+")";
  var aex = c.a_den[i]>0 ? "exact rational, denominator "+c.a_den[i]+" digits" : (c.a_den[i]===0?"exact":"—");
  var t = "<b>"+esc(M.name)+"</b>  layer "+c.layer[i]+", head "+c.head[i]+", kv_head "+c.kv[i]+
    "<br>a = "+fmt(c.a[i],12)+" ("+aex+")   float64 "+fmt(c.f_a[i])+
    "<br>b = "+evid(M,i,"b")+"   float64 "+fmt(c.f_b[i])+
    "<br>c = "+evid(M,i,"c")+"   float64 "+fmt(c.f_c[i])+
    "<br>d = "+evid(M,i,"d")+"   float64 "+fmt(c.f_d[i])+
    "<br>signature (n_pos, n_neg, n_zero) = "+sig+"   rank M = "+c.rank[i];
  if(c.f_flags[i]) t += "<br><span style='color:#b00020'>float64 disagrees: "+esc(c.f_flags[i])+"</span>";
  if(M.certificates) t += "<br><i>click: open the certificate</i>";
  return t; }
function selected(M){ var c=M.cols, out=[];
  for(var i=0;i<c.layer.length;i++){ if(state.layer==="all"||c.layer[i]===+state.layer) out.push(i); }
  return out; }
function zoom(traces){ // the smallest sub-triangle holding every head, with a margin
  var m=[1,1,1]; traces.forEach(function(t){ [t.a,t.b,t.c].forEach(function(v,k){ v.forEach(function(x){ m[k]=Math.min(m[k],x); }); }); });
  var side=1-m[0]-m[1]-m[2], pad=Math.max(0.04,0.08*side);
  var f=m.map(function(x){ return Math.max(0,x-pad); }); var tot=f[0]+f[1]+f[2];
  if(tot<0.05) return null; if(tot>0.97) f=f.map(function(x){ return x*0.97/tot; });
  return f; }
function draw(){
  var M=D.models[state.m], idx=selected(M), base=M.baseline;
  var zeros=idx.filter(function(i){return category(M.cols.faces[i])==="zero";}).length;
  var half=1e-3; M.cols.a.forEach(function(a){ if(a!==null) half=Math.max(half,Math.abs(a-base)); }); half*=1.05;
  var traces=[], first=true;
  CATS.forEach(function(cat){
    var ids=idx.filter(function(i){return category(M.cols.faces[i])===cat[0];});
    if(!ids.length) return;
    var A=[],B=[],C=[],col=[],txt=[];
    ids.forEach(function(i){ var p=coord(M,i); A.push(p[0]);B.push(p[1]);C.push(p[2]); col.push(M.cols.a[i]); txt.push(hover(M,i)); });
    traces.push({type:"scatterternary",mode:"markers",name:cat[2],a:A,b:B,c:C,text:txt,customdata:ids,cliponaxis:false,
      hovertemplate:"%{text}<extra></extra>",
      marker:{symbol:cat[1],size:cat[0]==="none"?8:11,color:col,colorscale:"RdBu",cmin:base-half,cmax:base+half,
        line:{width:cat[1]==="x-open"?1.6:0.6,color:"#222"},
        showscale:first,colorbar:first?{title:{text:"a (skew energy)",side:"right"},len:0.8,x:1.02,
          tickvals:[base-half,base,base+half],ticktext:[fmt(base-half,3),"a₀ = "+fmt(base,4),fmt(base+half,3)]}:undefined}});
    first=false; });
  var fit=document.getElementById("whole").checked?null:zoom(traces);
  var layout={margin:{l:60,r:40,t:50,b:40},showlegend:true,legend:{x:0,y:1.0,font:{size:12},bgcolor:"rgba(255,255,255,0.85)"},
    ternary:{sum:1,bgcolor:"#fff",aaxis:{title:{text:"d  (S ⪯ 0)"},min:fit?fit[0]:0,linecolor:"#777",gridcolor:"#eee"},
      baxis:{title:{text:"b  (α = β)"},min:fit?fit[1]:0,linecolor:"#777",gridcolor:"#eee"},
      caxis:{title:{text:"c  (S ⪰ 0)"},min:fit?fit[2]:0,linecolor:"#777",gridcolor:"#eee"}},
    hoverlabel:{align:"left",font:{size:12}}};
  return Plotly.react("plot",traces,layout,{displaylogo:false,responsive:true,showSendToCloud:false,plotlyServerURL:"",
    showEditInChartStudio:false,showLink:false}).then(function(){
    var el=document.getElementById("plot");
    if(!el.__qkClick){ el.__qkClick=true; el.on("plotly_click",function(ev){ var p=ev.points&&ev.points[0]; if(!p) return;
      var M2=D.models[state.m], h=certHref(M2,p.customdata); if(h) window.open(h,"_blank"); }); }
    document.getElementById("counts").textContent = idx.length+" heads shown of "+M.heads+
      (zeros?" ("+zeros+" not drawn: "+ZERO_NOTE+")":"")+
      "; N = "+M.N+", n = "+M.n+", random baseline a₀ = (N−1)/(2N) = "+fmt(base,6)+(M.score?"; score = "+M.score:"");
    status(idx.length, zeros);
    var hv=/hover=(\d+)/.exec(location.hash); if(hv){ var want=+hv[1], tr=-1, pn=-1;
      traces.forEach(function(t,k){ var j=t.customdata.indexOf(want); if(j>=0){ tr=k; pn=j; } });
      if(tr>=0) Plotly.Fx.hover("plot",[{curveNumber:tr,pointNumber:pn}],"ternary"); } }); }
var COLS=[["layer","layer"],["head","head"],["kv","kv_head"],["sig","signature"],["a","a"],["b","b"],["c","c"],["d","d"],
  ["faces","exact faces"],["f","float64 a, b, c, d"],["cert","certificate"]];
function cellVal(M,i,k){ var c=M.cols;
  if(k==="sig") return c.n_pos[i]*1e6+c.n_neg[i]; if(k==="faces") return category(c.faces[i]);
  if(k==="f") return c.f_a[i]; if(k==="cert") return i; return c[k][i]; }
function table(){
  var M=D.models[state.m], idx=selected(M), k=state.sort[0], dir=state.sort[1];
  idx.sort(function(x,y){ var a=cellVal(M,x,k), b=cellVal(M,y,k);
    if(a===null) return 1; if(b===null) return -1; if(a<b) return -dir; if(a>b) return dir;
    return (M.cols.layer[x]-M.cols.layer[y])||(M.cols.head[x]-M.cols.head[y]); });
  var pages=Math.max(1,Math.ceil(idx.length/state.per)); state.page=Math.min(state.page,pages-1);
  var t=document.getElementById("heads"); t.textContent="";
  var tr=document.createElement("tr");
  COLS.forEach(function(c){ var th=document.createElement("th"); th.textContent=c[1]; th.dataset.k=c[0];
    if(c[0]===k) th.className=dir>0?"sorted-asc":"sorted-desc";
    th.onclick=function(){ state.sort=[c[0], state.sort[0]===c[0]?-state.sort[1]:1]; state.page=0; table(); };
    tr.appendChild(th); });
  t.appendChild(tr);
  idx.slice(state.page*state.per,(state.page+1)*state.per).forEach(function(i){
    var c=M.cols, r=document.createElement("tr");
    function td(text,cls){ var d=document.createElement("td"); d.textContent=text; if(cls) d.className=cls; r.appendChild(d); return d; }
    td(c.layer[i]); td(c.head[i]); td(c.kv[i]); td("("+c.n_pos[i]+", "+c.n_neg[i]+", "+(M.N-c.n_pos[i]-c.n_neg[i])+")");
    if(category(c.faces[i])==="zero"){ ["a","b","c","d"].forEach(function(){ td("0","exact"); });
      td("L = 0","exact l").title=ZERO_NOTE; td("—","l");
      var hz=certHref(M,i), dz=td("","l");
      if(hz){ var az=document.createElement("a"); az.href=hz; az.textContent=hz.split("/").pop(); dz.appendChild(az); } else dz.textContent="—";
      t.appendChild(r); return; }
    td(fmt(c.a[i],8),"exact");
    ["b","c","d"].forEach(function(q){ var f=c.faces[i][q==="b"?0:q==="c"?1:2];
      if(f==="T") td("0","exact"); else if(c[q+"_lo"][i]==="") td("undecided","undec"); else td(fmt(c[q][i],8)); });
    var cat=category(c.faces[i]); td(cat==="none"?"—":cat==="undecided"?"order undecided":cat.replace("cd0","c=d=0").replace("c0","c=0").replace("d0","d=0").replace("b0","b=0"), cat==="undecided"?"undec":"exact l");
    td([fmt(c.f_a[i],5),fmt(c.f_b[i],5),fmt(c.f_c[i],5),fmt(c.f_d[i],5)].join(", ")+(c.f_flags[i]?"  ⚠ "+c.f_flags[i]:""), c.f_flags[i]?"bad l":"l");
    var h=certHref(M,i), d=td("","l");
    if(h){ var a=document.createElement("a"); a.href=h; a.textContent=h.split("/").pop(); d.appendChild(a); } else d.textContent="—";
    t.appendChild(r); });
  var pg=document.getElementById("pager"); pg.textContent="";
  var info=document.createElement("span"); info.textContent=idx.length+" heads; page "+(state.page+1)+" of "+pages+
    " (click a column title to sort)"; 
  var prev=document.createElement("button"); prev.textContent="◀ previous"; prev.disabled=state.page===0; prev.onclick=function(){state.page--;table();};
  var next=document.createElement("button"); next.textContent="next ▶"; next.disabled=state.page>=pages-1; next.onclick=function(){state.page++;table();};
  pg.appendChild(prev); pg.appendChild(next); pg.appendChild(info); }
function layers(){ var M=D.models[state.m], s=document.getElementById("layer"), seen={}; s.textContent="";
  var o=document.createElement("option"); o.value="all"; o.textContent="all layers"; s.appendChild(o);
  M.cols.layer.forEach(function(l){ if(!seen[l]){ seen[l]=1; } });
  Object.keys(seen).map(Number).sort(function(a,b){return a-b;}).forEach(function(l){
    var o=document.createElement("option"); o.value=String(l); o.textContent="layer "+l; s.appendChild(o); });
  s.value=state.layer; }
function compareSection(){ var C=D.compare, sec=document.getElementById("compare"); if(!C) return;
  var h=document.createElement("h2"); h.textContent="Audit of a published table (qkverify compare)"; sec.appendChild(h);
  var p=document.createElement("p"); p.className="sub"; p.textContent=C.n_rows+" rows audited. "+C.error_model.replace(/\n/g," ")+
    " Per-row results: "+C.csv+"."+(C.joined?" Rows of "+C.joined+" joined with the certified heads of "+C.certified_name+".":"");
  sec.appendChild(p);
  Object.keys(C.summary).forEach(function(model){ var S=C.summary[model];
    var t=document.createElement("table"); t.className="summary"; t.style.width="auto"; t.style.marginBottom="12px";
    var cap=document.createElement("caption"); cap.style.textAlign="left"; cap.style.fontWeight="600";
    cap.textContent=model+": "+S.rows+" rows — ok "+(S.verdicts.ok||0)+", flagged "+(S.verdicts.flagged||0)+", contradicts "+(S.verdicts.contradicts||0);
    t.appendChild(cap);
    var hr=document.createElement("tr"); ["check","statement","theorem","ok","below resolution","contradicts","n/a"].forEach(function(x,j){
      var th=document.createElement("th"); th.textContent=x; if(j<3) th.className="l"; hr.appendChild(th); }); t.appendChild(hr);
    Object.keys(S.checks).forEach(function(c){ var r=document.createElement("tr");
      [c,C.checks[c].statement,C.checks[c].theorem,S.checks[c]["ok"]||0,S.checks[c]["below resolution"]||0,S.checks[c]["contradicts"]||0,S.checks[c]["n/a"]||0].forEach(function(x,j){
        var d=document.createElement("td"); d.textContent=x; if(j===1||j===2) d.className="l"; if(j===5&&x>0) d.className="bad"; r.appendChild(d); });
      t.appendChild(r); });
    sec.appendChild(t);
    if(Object.keys(S.judged).length){ var t2=document.createElement("table"); t2.className="summary"; t2.style.width="auto"; t2.style.marginBottom="12px";
      var c2=document.createElement("caption"); c2.style.textAlign="left"; c2.style.fontWeight="600"; c2.textContent=model+" against the certified "+C.certified_name; t2.appendChild(c2);
      var ks=["agree","agree by luck","disagrees within the error model","disagrees beyond the error model","exact undecided","n/a"];
      var hr2=document.createElement("tr"); ["item"].concat(ks).forEach(function(x){ var th=document.createElement("th"); th.textContent=x; hr2.appendChild(th); }); t2.appendChild(hr2);
      Object.keys(S.judged).forEach(function(it){ var r=document.createElement("tr"); var d=document.createElement("td"); d.textContent=it; r.appendChild(d);
        ks.forEach(function(k,j){ var d=document.createElement("td"); var v=S.judged[it][k]||0; d.textContent=v; if(j===3&&v>0) d.className="bad"; r.appendChild(d); }); t2.appendChild(r); });
      sec.appendChild(t2); } });
  var R=C.rows; var h3=document.createElement("h2"); h3.textContent="Rows that are not plainly ok ("+C.n_listed+(C.truncated?", first "+(C.n_listed-C.truncated)+" listed":"")+")"; sec.appendChild(h3);
  var box=document.createElement("div"); box.style.maxHeight="480px"; box.style.overflow="auto";
  var t=document.createElement("table"); var cols=C.joined?["model","layer","head","verdict","model_verdict","findings"]:["model","layer","head","verdict","findings"];
  var sort=["layer",1]; var order=R.model.map(function(_,i){return i;});
  function fill(){ t.textContent=""; var hr=document.createElement("tr");
    cols.forEach(function(c){ var th=document.createElement("th"); th.textContent=c; if(c==="findings") th.className="l";
      th.onclick=function(){ sort=[c, sort[0]===c?-sort[1]:1]; order.sort(function(x,y){ var a=R[c][x], b=R[c][y]; return a<b?-sort[1]:a>b?sort[1]:0; }); fill(); };
      hr.appendChild(th); }); t.appendChild(hr);
    order.slice(0,2000).forEach(function(i){ var r=document.createElement("tr");
      cols.forEach(function(c){ var d=document.createElement("td"); d.textContent=R[c][i]; if(c==="findings") d.className="l";
        if((c==="verdict"&&R[c][i]==="contradicts")||(c==="model_verdict"&&R[c][i]==="beyond")) d.className="bad"; r.appendChild(d); });
      t.appendChild(r); }); }
  fill(); box.appendChild(t); sec.appendChild(box); }
function status(shown, zeros){ var el=document.getElementById(D.status_id);
  var pts=document.querySelectorAll("#plot .scatterlayer .trace path.point").length;
  el.dataset.markers=String(pts); el.dataset.shown=String(shown); el.dataset.errors=String(window.__qkErrors.length);
  el.dataset.zero=String(zeros||0);
  el.textContent=JSON.stringify({markers:pts,shown:shown,zero:zeros||0,errors:window.__qkErrors}); }
function init(){
  document.getElementById("title").textContent=D.title;
  var total=D.models.reduce(function(s,M){return s+M.heads;},0);
  document.getElementById("subtitle").textContent=D.models.length?D.models.length+" model"+(D.models.length>1?"s":"")+", "+total+
    " heads. Every value below was certified by qkverify (a exact; b, c, d exact on a decided face, else a certified interval); float64 figures are the authors' pipeline, shown beside, never deciding.":
    "An audit of a published float table against the theorems, within its pipeline's error model (no certified model joined: add --model).";
  var ms=document.getElementById("model");
  D.models.forEach(function(M,k){ var o=document.createElement("option"); o.value=String(k); o.textContent=M.name+" ("+M.heads+" heads)"; ms.appendChild(o); });
  if(D.models.length<2) document.getElementById("model-box").style.display="none";
  ms.onchange=function(){ state.m=+ms.value; state.layer="all"; state.page=0; layers(); draw(); table(); };
  document.getElementById("whole").onchange=function(){ draw(); };
  document.getElementById("layer").onchange=function(e){ state.layer=e.target.value; state.page=0; draw(); table(); };
  document.getElementById("legend-note").textContent="Marker shape: what was decided exactly (legend). Colour: skew energy a on a diverging scale centred on the random baseline a₀ = (N−1)/(2N): blue heads are more symmetric than a random matrix, red ones more skew. Click a head to open its certificate.";
  compareSection();
  if(!D.models.length){ ["plot","plot-caption","legend-note","pager","heads"].forEach(function(id){ document.getElementById(id).style.display="none"; });
    document.querySelector(".controls").style.display="none"; document.querySelector("main > h2").style.display="none"; status(0); return; }
  if(!D.models[0].heads){ document.getElementById("plot").textContent="no heads"; status(0); return; }
  var hm=/model=(\d+)/.exec(location.hash), hl=/layer=(\d+)/.exec(location.hash);   // #model=K&layer=L
  if(hm&&+hm[1]<D.models.length){ state.m=+hm[1]; ms.value=hm[1]; }
  if(hl) state.layer=hl[1];
  layers(); draw(); table(); }
try { init(); } catch(e) { window.__qkErrors.push(String(e)); status(0); }
"""
