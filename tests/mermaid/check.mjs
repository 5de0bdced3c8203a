// Parses Mermaid gantt charts with the real Mermaid parser (the npm
// `mermaid` package, under jsdom), for tests/mermaid.rs.
//
// Takes: paths of files, each holding one chart's Mermaid source (what
// kgtrace writes inside a ```mermaid fence). Gives: exit 0 when every chart
// parses as a gantt chart whose sections and bars are exactly the lines
// written (same names, same start and end times, end not before start),
// else exit 1 with one line per problem. Mermaid's gantt grammar accepts a
// bar name cut at a stray `:` or `;` without an error, so parsing alone
// would not catch a badly escaped name: the names are compared too.
import { readFileSync } from 'node:fs';
import { JSDOM } from 'jsdom';

const dom = new JSDOM('<!doctype html><html><body></body></html>');
globalThis.window = dom.window;
globalThis.document = dom.window.document;
const { default: mermaid } = await import('mermaid');
mermaid.initialize({ startOnLoad: false });

const KEYWORDS = /^(gantt|title|dateFormat|axisFormat|todayMarker|tickInterval|excludes|includes|displayMode|weekday)\b/;
const pad = (n, w = 2) => String(n).padStart(w, '0');
const local = (d) =>
  `${d.getFullYear()}-${pad(d.getMonth() + 1)}-${pad(d.getDate())} ` +
  `${pad(d.getHours())}:${pad(d.getMinutes())}:${pad(d.getSeconds())}.${pad(d.getMilliseconds(), 3)}`;

/** The sections and bars as written: [{section, name, start, end}]. */
function written(source) {
  const bars = [];
  let section = null;
  for (const raw of source.split('\n')) {
    const line = raw.trim();
    if (line === '' || KEYWORDS.test(line)) continue;
    if (line.startsWith('section ')) {
      section = line.slice('section '.length).trim();
      continue;
    }
    const colon = line.indexOf(' :');
    const data = line.slice(colon + 2).split(',').map((s) => s.trim());
    bars.push({ section, name: line.slice(0, colon).trim(), start: data.at(-2), end: data.at(-1) });
  }
  return bars;
}

let problems = 0;
let charts = 0;
let bars = 0;
const fail = (file, what) => {
  problems += 1;
  console.log(`${file}: ${what}`);
};
for (const file of process.argv.slice(2)) {
  const source = readFileSync(file, 'utf8');
  charts += 1;
  try {
    const parsed = await mermaid.parse(source);
    if (parsed.diagramType !== 'gantt') fail(file, `parsed as ${parsed.diagramType}, not gantt`);
    const diagram = await mermaid.mermaidAPI.getDiagramFromText(source);
    const tasks = diagram.db.getTasks();
    const want = written(source);
    if (tasks.length !== want.length) fail(file, `${tasks.length} bars parsed, ${want.length} written`);
    want.forEach((w, i) => {
      const t = tasks[i];
      if (!t) return;
      bars += 1;
      const got = { section: t.section.trim(), name: t.task.trim(), start: local(t.startTime), end: local(t.endTime) };
      for (const key of ['section', 'name', 'start', 'end']) {
        if (got[key] !== w[key]) fail(file, `bar ${i + 1}: ${key} parsed as ${JSON.stringify(got[key])}, written ${JSON.stringify(w[key])}`);
      }
      if (t.endTime < t.startTime) fail(file, `bar ${i + 1} ends before it starts`);
    });
  } catch (e) {
    fail(file, `Mermaid could not parse it: ${e.message}`);
  }
}
console.log(`mermaid: ${charts} charts, ${bars} bars checked, ${problems} problems`);
process.exit(problems === 0 && charts > 0 ? 0 : 1);
