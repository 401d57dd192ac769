//! example-units-rust: the toxgate module ABI (sdk/ABI.md, version 1)
//! implemented in Rust with the standard library only, no crates: the
//! concentration converter of modules/example-units, for authors who do not
//! write Go and as a conformance check of the ABI's language neutrality.
//!
//! Build (Debian's rustc with libstd-rust-dev-wasm32; `make modules` does it):
//!
//!     rustc --edition 2021 --crate-type cdylib --target wasm32-unknown-unknown \
//!           -C opt-level=3 -C panic=abort -o example-units-rust.wasm lib.rs
//!
//! The gateway validates the input against the manifest's schema before the
//! module runs, so the reader below only has to take the flat object the
//! schema admits; it still refuses anything else with an input error.

use std::fmt::Write;

const MANIFEST: &str = concat!(
    r#"{"abi":1,"name":"example-units-rust","version":"1.0.0","#,
    r#""title":"Concentration units (Rust)","#,
    r#""description":"The example-units converter written in Rust against the raw ABI: mass (g/L) and molar (mol/L) concentrations.","#,
    r#""routes":[{"path":"/example/rust/convert","summary":"Convert a concentration between mass and molar units (Rust module)","#,
    r#""input_schema":{"type":"object","additionalProperties":false,"required":["value","from","to"],"properties":{"#,
    r#""value":{"type":"number","minimum":0,"description":"concentration to convert","examples":[10]},"#,
    r#""from":{"type":"string","description":"unit of value","examples":["mg/L"]},"#,
    r#""to":{"type":"string","description":"unit wanted","examples":["uM"]},"#,
    r#""molar_mass":{"type":"number","exclusiveMinimum":0,"description":"molar mass in g/mol, needed between mass and molar units","examples":[543.52]}}},"#,
    r#""example":{"value":10,"from":"mg/L","to":"uM","molar_mass":543.52},"#,
    r#""output":{"description":"value: the converted concentration in unit; factor: multiplier applied; input: what was converted"}}],"#,
    r#""limits":{"memory_pages":32,"timeout_ms":2000},"#,
    r#""model_card":{"summary":"Exact unit arithmetic: c[mol/L] = c[g/L] / M[g/mol], as modules/example-units.","#,
    r#""intended_use":"Preparing dosing solutions; the example of a module written against the raw ABI in another language.","#,
    r#""method":"Closed-form conversion factors; no fitted parameters.","#,
    r#""validation":"gateway/modulehost/rust_test.go checks its answers against the Go example module's for every pair of units.","#,
    r#""limitations":"Ideal dilute solutions; no activity coefficients, no density corrections.","#,
    r#""units":{"molar_mass":"g/mol"},"license":"Apache-2.0"}}"#
);

/// Units: (molar, power of ten to the base unit g/L or mol/L), as example-units.
const UNITS: [(&str, bool, i32); 13] = [
    ("g/L", false, 0),
    ("mg/mL", false, 0),
    ("mg/L", false, -3),
    ("ug/mL", false, -3),
    ("ug/L", false, -6),
    ("ng/mL", false, -6),
    ("ng/L", false, -9),
    ("pg/mL", false, -9),
    ("M", true, 0),
    ("mM", true, -3),
    ("uM", true, -6),
    ("nM", true, -9),
    ("pM", true, -12),
];

static mut INPUT: Vec<u8> = Vec::new();
static mut OUTPUT: Vec<u8> = Vec::new();

fn pack(ptr: *const u8, len: usize) -> i64 {
    ((ptr as u32 as i64) << 32) | (len as u32 as i64)
}

#[no_mangle]
pub extern "C" fn toxgate_abi_version() -> i32 {
    1
}

#[no_mangle]
pub extern "C" fn toxgate_manifest() -> i64 {
    pack(MANIFEST.as_ptr(), MANIFEST.len())
}

/// Returns a buffer of n bytes for the input; it is reused across calls.
#[no_mangle]
pub unsafe extern "C" fn toxgate_alloc(n: i32) -> i32 {
    let input = &mut *std::ptr::addr_of_mut!(INPUT);
    input.clear();
    input.resize(n.max(0) as usize, 0);
    input.as_ptr() as i32
}

/// Evaluates the input written into the alloc buffer; the result (status
/// byte, then JSON) stays valid until the next call.
#[no_mangle]
pub unsafe extern "C" fn toxgate_evaluate(route: i32, ptr: i32, n: i32) -> i64 {
    let input = &*std::ptr::addr_of!(INPUT);
    let out = &mut *std::ptr::addr_of_mut!(OUTPUT);
    out.clear();
    let result = if route != 0 {
        Err(("", String::from("no such route"), "internal"))
    } else if n < 0 || n as usize > input.len() || ptr != input.as_ptr() as i32 {
        Err(("", String::from("the input was not written where toxgate_alloc said"), "internal"))
    } else {
        convert(&input[..n as usize]).map_err(|(field, msg)| (field, msg, "invalid_input"))
    };
    match result {
        Ok(json) => {
            out.push(0);
            out.extend_from_slice(json.as_bytes());
        }
        Err((field, message, kind)) => {
            out.push(1);
            let mut e = String::from("{\"kind\":\"");
            e.push_str(kind);
            e.push_str("\",\"message\":");
            quote(&mut e, &message);
            if !field.is_empty() {
                e.push_str(",\"field\":");
                quote(&mut e, field);
            }
            e.push('}');
            out.extend_from_slice(e.as_bytes());
        }
    }
    pack(out.as_ptr(), out.len())
}

type InputError = (&'static str, String);

/// The converter: the same arithmetic as modules/example-units/units.
fn convert(body: &[u8]) -> Result<String, InputError> {
    let mut value = None;
    let mut from = None;
    let mut to = None;
    let mut molar_mass = 0.0;
    let mut r = Reader { b: body, i: 0 };
    r.object(|key, r| {
        match key {
            "value" => value = Some(r.number("value")?),
            "from" => from = Some(r.string("from")?),
            "to" => to = Some(r.string("to")?),
            "molar_mass" => molar_mass = r.number("molar_mass")?,
            _ => return Err(("", format!("unknown field {key:?}"))),
        }
        Ok(())
    })?;
    let value = value.ok_or(("value", String::from("is required")))?;
    let from = from.ok_or(("from", String::from("is required")))?;
    let to = to.ok_or(("to", String::from("is required")))?;
    if value < 0.0 {
        return Err(("value", String::from("must not be negative")));
    }
    let (fm, fe) = unit("from", &from)?;
    let (tm, te) = unit("to", &to)?;
    let mut factor = 10f64.powi(fe - te);
    if fm != tm {
        if molar_mass <= 0.0 {
            return Err((
                "molar_mass",
                String::from("a positive molar mass (g/mol) is needed to convert between mass and molar units"),
            ));
        }
        if fm {
            factor *= molar_mass;
        } else {
            factor /= molar_mass;
        }
    }
    let mut s = String::with_capacity(96);
    s.push_str("{\"value\":");
    number(&mut s, value * factor)?;
    s.push_str(",\"unit\":");
    quote(&mut s, &to);
    s.push_str(",\"factor\":");
    number(&mut s, factor)?;
    s.push_str(",\"input\":");
    let mut input = String::new();
    number(&mut input, value)?;
    input.push(' ');
    input.push_str(&from);
    quote(&mut s, &input);
    s.push('}');
    Ok(s)
}

fn unit(field: &'static str, name: &str) -> Result<(bool, i32), InputError> {
    let name = name.replace('µ', "u").replace('μ', "u");
    for (u, molar, exp) in UNITS {
        if u == name {
            return Ok((molar, exp));
        }
    }
    let mut known: Vec<&str> = UNITS.iter().map(|u| u.0).collect();
    known.sort_unstable();
    Err((field, format!("unknown unit {:?}; known: {}", name, known.join(", "))))
}

/// Writes a finite number as JSON (Rust's shortest round-trip digits).
fn number(s: &mut String, x: f64) -> Result<(), InputError> {
    if !x.is_finite() {
        return Err(("value", String::from("the result is not a finite number")));
    }
    write!(s, "{x}").map_err(|_| ("", String::from("formatting failed")))
}

/// Writes t as a JSON string.
fn quote(s: &mut String, t: &str) {
    s.push('"');
    for c in t.chars() {
        match c {
            '"' => s.push_str("\\\""),
            '\\' => s.push_str("\\\\"),
            c if (c as u32) < 0x20 => {
                let _ = write!(s, "\\u{:04x}", c as u32);
            }
            c => s.push(c),
        }
    }
    s.push('"');
}

/// Reader of one flat JSON object of strings and numbers.
struct Reader<'a> {
    b: &'a [u8],
    i: usize,
}

impl Reader<'_> {
    fn space(&mut self) {
        while self.i < self.b.len() && matches!(self.b[self.i], b' ' | b'\t' | b'\n' | b'\r') {
            self.i += 1;
        }
    }

    fn byte(&mut self, c: u8) -> bool {
        self.space();
        if self.i < self.b.len() && self.b[self.i] == c {
            self.i += 1;
            true
        } else {
            false
        }
    }

    fn object(&mut self, mut member: impl FnMut(&str, &mut Self) -> Result<(), InputError>) -> Result<(), InputError> {
        if !self.byte(b'{') {
            return Err(("", String::from("the body must be a JSON object")));
        }
        if self.byte(b'}') {
            return Ok(());
        }
        loop {
            let key = self.string("")?;
            if !self.byte(b':') {
                return Err(("", String::from("invalid JSON body")));
            }
            member(&key, self)?;
            if self.byte(b',') {
                continue;
            }
            if self.byte(b'}') {
                self.space();
                return if self.i == self.b.len() { Ok(()) } else { Err(("", String::from("invalid JSON body"))) };
            }
            return Err(("", String::from("invalid JSON body")));
        }
    }

    fn string(&mut self, field: &'static str) -> Result<String, InputError> {
        let bad = || (field, String::from("must be a string"));
        if !self.byte(b'"') {
            return Err(bad());
        }
        let mut out = Vec::new();
        while self.i < self.b.len() {
            let c = self.b[self.i];
            self.i += 1;
            match c {
                b'"' => return String::from_utf8(out).map_err(|_| bad()),
                b'\\' => {
                    let e = *self.b.get(self.i).ok_or_else(bad)?;
                    self.i += 1;
                    match e {
                        b'"' | b'\\' | b'/' => out.push(e),
                        b'n' => out.push(b'\n'),
                        b't' => out.push(b'\t'),
                        b'r' => out.push(b'\r'),
                        b'b' => out.push(8),
                        b'f' => out.push(12),
                        b'u' => {
                            let hex = self.b.get(self.i..self.i + 4).ok_or_else(bad)?;
                            let code = u32::from_str_radix(std::str::from_utf8(hex).map_err(|_| bad())?, 16).map_err(|_| bad())?;
                            self.i += 4;
                            let ch = char::from_u32(code).unwrap_or('\u{fffd}');
                            let mut buf = [0u8; 4];
                            out.extend_from_slice(ch.encode_utf8(&mut buf).as_bytes());
                        }
                        _ => return Err(bad()),
                    }
                }
                _ => out.push(c),
            }
        }
        Err(bad())
    }

    fn number(&mut self, field: &'static str) -> Result<f64, InputError> {
        self.space();
        let start = self.i;
        while self.i < self.b.len() && matches!(self.b[self.i], b'-' | b'+' | b'.' | b'e' | b'E' | b'0'..=b'9') {
            self.i += 1;
        }
        std::str::from_utf8(&self.b[start..self.i])
            .ok()
            .and_then(|s| s.parse::<f64>().ok())
            .filter(|x| x.is_finite())
            .ok_or((field, String::from("must be a number")))
    }
}
