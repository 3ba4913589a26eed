// The demo page: load a mechanism file, show its guarantee, privatize a value — all in the browser, with the
// minified client bundle (dist/mechdesign.min.js).
import { MechanismFileError, Privatizer, verifyMechanismFile } from "../dist/mechdesign.min.js";

const $ = (id) => document.getElementById(id);
let privatizer = null;
$("needs-server").hidden = true; // the module runs: the page is served (index.html says why it must be)

function row(name, value) {
  const tr = document.createElement("tr");
  for (const text of [name, value]) {
    const td = document.createElement("td");
    td.textContent = text;
    tr.append(td);
  }
  return tr;
}

function show(kind, text, rows = []) {
  const status = $("status");
  status.replaceChildren();
  const line = document.createElement("p");
  line.className = kind;
  line.textContent = text;
  status.append(line);
  if (rows.length) {
    const table = document.createElement("table");
    for (const [name, value] of rows) table.append(row(name, value));
    status.append(table);
  }
}

function setReady(ready) {
  $("value").disabled = !ready;
  $("privatize").disabled = !ready;
  $("output").textContent = "—";
}

async function load() {
  setReady(false);
  privatizer = null;
  const chosen = $("file").files[0];
  if (!chosen) return show("bad", "Choose a mechanism file first.");
  const key = $("key").value.trim();
  try {
    const file = await verifyMechanismFile(new Uint8Array(await chosen.arrayBuffer()), key ? { publicKey: key } : {});
    const g = file.guarantee;
    const rows = [
      ["notion", g.notion === "pml" ? "pointwise maximal leakage over an ℓ1 ball" : "local differential privacy"],
      ["stated ε", `${g.epsilon} nats`],
      ["recomputed ε", `${file.achieved} nats`],
      ...(g.notion === "pml" ? [["radius β", String(g.radius)], ["δ", String(g.delta ?? "— (none stated)")], ["samples m", String(g.samples ?? "—")]] : []),
      ["inputs → outputs", `${file.inputs.length} → ${file.outputs.length}`],
      ["sha256", `${file.sha256.slice(0, 16)}…`],
      ["signature", file.signatureChecked ? "valid for the given key" : file.signature ? "present, not checked (no key)" : "none"],
    ];
    if (!file.holds) return show("bad", `Refused: the matrix does not achieve the stated ε (${file.achieved} > ${g.epsilon}).`, rows);
    privatizer = new Privatizer(file);
    const options = document.createDocumentFragment(); // one append a label: a spread of every label overflows the stack
    for (const label of file.inputs) options.append(Object.assign(document.createElement("option"), { value: label }));
    $("inputs").replaceChildren(options);
    show("ok", `Guarantee holds: ${g.notion} ε = ${g.epsilon}${file.signatureChecked ? ", signature valid" : ""}.`, rows);
    setReady(true);
  } catch (error) {
    show("bad", error instanceof MechanismFileError ? `Refused: ${error.message}` : `Error: ${error.message}`);
  }
}

function privatize() {
  try {
    $("output").textContent = privatizer.privatize([$("value").value])[0];
  } catch (error) {
    $("output").textContent = `(${error.message})`;
  }
}

$("load").addEventListener("click", load);
$("privatize").addEventListener("click", privatize);
$("value").addEventListener("keydown", (event) => event.key === "Enter" && privatize());
