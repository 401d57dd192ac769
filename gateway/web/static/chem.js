// toxgate: pictures of molecules. An ES module loaded only on pages that
// show SMILES, and only when the gateway embeds OpenChemLib JS
// (static/vendor/openchemlib.js, from npm by make web-vendor). Every SMILES
// stays as text in the page; this script adds a 2D drawing next to it, and
// a structure editor to the SMILES fields of the model forms. A SMILES the
// library cannot read keeps its text and gets a note; nothing else changes.
//
// Bounds, from the script element (the server's constants in depict.go):
// data-per-page (drawings of the page's tables in all), data-max-smiles
// (longest SMILES drawn), data-input-lines (lines of a SMILES box drawn).
import { Molecule, CanvasEditor } from "./vendor/openchemlib.js";

const me = document.getElementById("chem-script");
const bound = (name, dflt) => {
  const n = parseInt(me && me.getAttribute(name), 10);
  return n > 0 ? n : dflt;
};
const perPage = bound("data-per-page", 100);
const maxSMILES = bound("data-max-smiles", 300);
const inputLines = bound("data-input-lines", 12);

// svgURL draws smiles as an SVG data: URL, or answers "" when the library
// cannot read it (or it is empty or too long). The drawing is shown as an
// <img>: an image runs no script and loads nothing.
function svgURL(smiles, w, h) {
  if (!smiles || smiles.length > maxSMILES) {
    return "";
  }
  try {
    const mol = Molecule.fromSmiles(smiles);
    if (mol.getAllAtoms() === 0) {
      return "";
    }
    // Bonds at most a sixth of the width: a small molecule stays small.
    const svg = mol.toSVG(w, h, undefined, { maxAVBL: Math.round(w / 6), suppressChiralText: true });
    return "data:image/svg+xml;charset=utf-8," + encodeURIComponent(svg);
  } catch (e) {
    return "";
  }
}

function picture(smiles, w, h) {
  const src = svgURL(smiles, w, h);
  if (!src) {
    return null;
  }
  const img = document.createElement("img");
  img.className = "depiction";
  img.src = src;
  img.alt = ""; // the SMILES text next to it says the same to a screen reader
  img.width = w;
  img.height = h;
  return img;
}

function unreadable(el, smiles, why) {
  el.classList.add("smiles-bad");
  el.title = smiles.length > maxSMILES
    ? "Not drawn: longer than " + maxSMILES + " characters."
    : "Not drawn: not a SMILES the drawing library reads" + (why || ".");
}

// Cells and values the server marked (data-depict): drawn a few at a time
// so a page of a hundred structures stays responsive.
const marked = Array.prototype.slice.call(document.querySelectorAll("[data-depict]"), 0, perPage);
function drawSome(start) {
  const end = Math.min(start + 8, marked.length);
  for (let i = start; i < end; i++) {
    const el = marked[i];
    const smiles = el.textContent.trim();
    const img = picture(smiles, 160, 120);
    if (img) {
      el.classList.add("drawn");
      el.insertBefore(img, el.firstChild);
    } else {
      unreadable(el, smiles);
    }
  }
  if (end < marked.length) {
    window.setTimeout(() => drawSome(end), 0);
  }
}
drawSome(0);

// The model forms: each SMILES box gets drawings of what is typed in it
// (its first lines) and a structure editor that puts its structure into
// the box (replacing a one-line field; a new line of a batch box).
Array.prototype.forEach.call(document.querySelectorAll("[data-smiles-input]"), (input) => {
  const form = input.form;
  const key = (form && form.id ? form.id + "-" : "") + input.name;
  const tools = document.createElement("div");
  tools.className = "chem-tools";
  const drawings = document.createElement("div");
  drawings.className = "depict-input";
  drawings.id = "depict-" + key;
  drawings.setAttribute("aria-live", "polite");
  const open = document.createElement("button");
  open.type = "button";
  open.className = "secondary";
  open.id = "draw-" + key;
  open.textContent = "Draw a structure";
  tools.appendChild(open);
  tools.appendChild(drawings);
  input.insertAdjacentElement("afterend", tools);

  const lines = () => input.value.split(/\r?\n/).map((s) => s.trim()).filter((s) => s !== "");
  const redraw = () => {
    drawings.textContent = "";
    lines().slice(0, inputLines).forEach((smiles) => {
      const fig = document.createElement("figure");
      const img = picture(smiles, 200, 150);
      if (img) {
        fig.appendChild(img);
      } else {
        unreadable(fig, smiles, " (a name or identifier is resolved when the model runs).");
      }
      const cap = document.createElement("figcaption");
      cap.textContent = smiles.length > 80 ? smiles.slice(0, 79) + "…" : smiles;
      fig.appendChild(cap);
      drawings.appendChild(fig);
    });
  };
  let timer = 0;
  input.addEventListener("input", () => {
    window.clearTimeout(timer);
    timer = window.setTimeout(redraw, 250);
  });
  redraw();

  // The editor, made on the first click.
  let panel = null;
  let editor = null;
  open.addEventListener("click", () => {
    if (panel) {
      panel.hidden = !panel.hidden;
      return;
    }
    panel = document.createElement("div");
    panel.className = "chem-editor";
    panel.id = "editor-" + key;
    const host = document.createElement("div");
    host.className = "chem-editor-canvas";
    const bar = document.createElement("div");
    bar.className = "buttons";
    const use = document.createElement("button");
    use.type = "button";
    use.id = "use-" + key;
    use.textContent = "Use this structure";
    const clear = document.createElement("button");
    clear.type = "button";
    clear.className = "secondary";
    clear.id = "clear-" + key;
    clear.textContent = "Clear";
    const close = document.createElement("button");
    close.type = "button";
    close.className = "secondary";
    close.textContent = "Close";
    const note = document.createElement("span");
    note.className = "hint";
    note.setAttribute("role", "status");
    bar.appendChild(use);
    bar.appendChild(clear);
    bar.appendChild(close);
    bar.appendChild(note);
    panel.appendChild(host);
    panel.appendChild(bar);
    tools.insertBefore(panel, drawings);
    try {
      editor = new CanvasEditor(host, { initialMode: "molecule" });
    } catch (e) {
      note.textContent = "The structure editor could not start.";
      use.disabled = true;
      return;
    }
    const first = lines()[0];
    if (first && first.length <= maxSMILES) {
      try {
        editor.setMolecule(Molecule.fromSmiles(first));
      } catch (e) {
        // Not a SMILES (a name to resolve, say): start empty.
      }
    }
    use.addEventListener("click", () => {
      const mol = editor.getMolecule();
      const smiles = mol.getAllAtoms() > 0 ? mol.toIsomericSmiles() : "";
      if (!smiles) {
        note.textContent = "Draw a structure first.";
        return;
      }
      note.textContent = "";
      if (input.tagName === "TEXTAREA" && input.value.trim() !== "") {
        const all = lines();
        if (all[all.length - 1] !== smiles) {
          input.value = input.value.replace(/\s*$/, "") + "\n" + smiles;
        }
      } else {
        input.value = smiles;
      }
      input.dispatchEvent(new Event("input", { bubbles: true }));
      redraw();
      panel.hidden = true;
      input.focus();
    });
    clear.addEventListener("click", () => {
      editor.clearAll();
      note.textContent = "";
    });
    close.addEventListener("click", () => {
      panel.hidden = true;
    });
  });
});
document.documentElement.setAttribute("data-chem", "ready");
