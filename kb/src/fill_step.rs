//! Filling one fix step's machine placeholders (`<DRIVER_PACKAGE>`, `<BRANCH>`,
//! `<TORCH_PIN>`), shared by [`crate::placement`] and the build script. The build
//! classifies the filled form of every KB step that has one (with a representative value
//! of each placeholder), so a search that fills a fix with this machine's values looks
//! its effects up instead of compiling the effect table. A value gets the looked-up
//! effects only when it has the representative's shape ([`value_has_its_shape`]); the
//! test `a_filled_step_does_what_its_representative_does` holds the table to the effect
//! classifier over the values the planner and the driver table can produce.

/// The placeholders search fills from machine facts (kb/FORMAT.md, "Machine-dependent
/// steps"), in the order of [`REPRESENTATIVE`].
pub const FILLED: [&str; 3] = ["<DRIVER_PACKAGE>", "<BRANCH>", "<TORCH_PIN>"];

/// A value of each placeholder, as the machine's facts fill it, for the build-time
/// classification of filled steps.
pub const REPRESENTATIVE: [&str; 3] = [
    "nvidia-driver-580-open",
    "580",
    "torch==2.9.1 torchvision==0.24.1 torchaudio==2.9.1 --index-url https://download.pytorch.org/whl/cu128",
];

/// Fills the placeholders of the command part of `step` (a trailing `# comment` that
/// explains a placeholder keeps it); a `None` value leaves its placeholder.
pub fn fill_step(step: &str, values: [Option<&str>; 3]) -> String {
    if step.trim_start().starts_with('#') {
        return step.to_string();
    }
    let cut = comment_start(step).unwrap_or(step.len());
    let (code, comment) = step.split_at(cut);
    let mut code = code.to_string();
    for (token, value) in FILLED.into_iter().zip(values) {
        if let Some(value) = value {
            if code.contains(token) {
                code = code.replace(token, value);
            }
        }
    }
    format!("{code}{comment}")
}

/// Whether `value` has the shape of placeholder `i`'s representative, so the step it
/// fills does what the representative's does: a driver package name, a branch number,
/// or pip arguments (package pins, options, URLs: no shell syntax, not a command).
pub fn value_has_its_shape(i: usize, value: &str) -> bool {
    let plain = |v: &str, extra: &[u8]| {
        !v.is_empty()
            && v.bytes()
                .all(|b| b.is_ascii_alphanumeric() || b"._-".contains(&b) || extra.contains(&b))
    };
    match i {
        0 => {
            value
                .strip_prefix("nvidia-driver-")
                .is_some_and(|rest| rest.starts_with(|c: char| c.is_ascii_digit()))
                && plain(value, b"")
        }
        1 => value.bytes().all(|b| b.is_ascii_digit()) && !value.is_empty(),
        2 => {
            let first = value.split(' ').next().unwrap_or_default();
            (first.starts_with("torch") || first.starts_with("https://"))
                && plain(value, b"=+:/ @%~")
        }
        _ => false,
    }
}

/// The values that make `step` the filling of `template` ([`fill_step`] of the values
/// gives `step` back exactly), or `None` when it is not one.
pub fn values_in<'a>(template: &str, step: &'a str) -> Option<[Option<&'a str>; 3]> {
    if template.trim_start().starts_with('#') {
        return None;
    }
    let cut = comment_start(template).unwrap_or(template.len());
    let (code, comment) = template.split_at(cut);
    let filled = step.strip_suffix(comment)?;
    let mut values: [Option<&str>; 3] = [None; 3];
    let (mut t, mut s) = (code, filled);
    loop {
        // The next placeholder of the template and the literal text before it.
        let next = FILLED
            .iter()
            .enumerate()
            .filter_map(|(i, tok)| t.find(tok).map(|at| (at, i)))
            .min();
        let Some((at, i)) = next else {
            if t != s {
                return None;
            }
            break;
        };
        s = s.strip_prefix(&t[..at])?;
        t = &t[at + FILLED[i].len()..];
        // The value runs to where the template's next literal text starts.
        let lit_end = FILLED
            .iter()
            .filter_map(|tok| t.find(tok))
            .min()
            .unwrap_or(t.len());
        let lit = &t[..lit_end];
        let end = if lit.is_empty() {
            if lit_end < t.len() {
                return None; // two placeholders side by side: ambiguous
            }
            s.len()
        } else {
            s.find(lit)?
        };
        let value = &s[..end];
        match values[i] {
            Some(v) if v != value => return None,
            _ => values[i] = Some(value),
        }
        s = &s[end..];
    }
    (fill_step(template, values) == step).then_some(values)
}

/// Where a step's trailing comment starts: a `#` after whitespace, outside quotes.
pub fn comment_start(step: &str) -> Option<usize> {
    let (mut sq, mut dq) = (false, false);
    let b = step.as_bytes();
    for (i, &c) in b.iter().enumerate() {
        match c {
            b'\'' if !dq => sq = !sq,
            b'"' if !sq => dq = !dq,
            b'#' if !sq && !dq && i > 0 && b[i - 1].is_ascii_whitespace() => return Some(i),
            _ => {}
        }
    }
    None
}
