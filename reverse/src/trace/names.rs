//! Names and numbers: node names, the tangent dot and adjoint bar over them, display widths and
//! numbers for reading.

/// Combining dot above: the tangent u̇.
pub(super) const DOT: char = '\u{307}';
/// Combining macron: the adjoint ū.
pub(super) const BAR: char = '\u{304}';

/// `v₁₂` for node 12.
pub(super) fn default_name(i: usize) -> String {
    format!("v{}", crate::replay::error::subscript(i))
}

/// Puts the tangent dot or adjoint bar over a name: over its letter when the name is one letter
/// and an index (`x`, `v₃`, `x_1`), else over its last character. The precomposed character is
/// used where Unicode has one (`ẋ`, `ȳ`: the form a keyboard gives), so the text is NFC.
pub(super) fn decorate(name: &str, mark: char) -> String {
    let mut chars = name.chars();
    let Some(first) = chars.next() else {
        return mark.to_string();
    };
    let indexed = first.is_alphabetic()
        && chars
            .clone()
            .all(|c| c.is_ascii_digit() || ('₀'..='₉').contains(&c) || c == '_' || c == '\'');
    let (base, rest) = if indexed {
        (String::from(first), chars.as_str())
    } else {
        (name.to_string(), "")
    };
    let mut out = base;
    let last = out.pop().expect("the base is not empty");
    match compose(last, mark) {
        Some(c) => out.push(c),
        None => {
            out.push(last);
            out.push(mark);
        }
    }
    out.push_str(rest);
    out
}

/// The precomposed form of a letter with a macron or a dot above, if Unicode has one.
fn compose(base: char, mark: char) -> Option<char> {
    const BARRED: &str = "aāeēgḡiīoōuūyȳAĀEĒGḠIĪOŌUŪYȲ";
    const DOTTED: &str =
        "aȧbḃcċdḋeėfḟgġhḣmṁnṅoȯpṗrṙsṡtṫwẇxẋyẏzżAȦBḂCĊDḊEĖFḞGĠHḢIİMṀNṄOȮPṖRṘSṠTṪWẆXẊYẎZŻ";
    let table = match mark {
        BAR => BARRED,
        DOT => DOTTED,
        _ => return None,
    };
    let pairs: Vec<char> = table.chars().collect();
    pairs.chunks_exact(2).find(|p| p[0] == base).map(|p| p[1])
}

/// Display width: characters, not counting combining marks.
pub(super) fn width(s: &str) -> usize {
    s.chars()
        .filter(|c| !('\u{300}'..='\u{36f}').contains(c))
        .count()
}

pub(super) fn pad(s: &str, w: usize) -> String {
    let mut out = s.to_string();
    out.extend(core::iter::repeat_n(' ', w.saturating_sub(width(s))));
    out
}

/// A number for reading: integers in full, others to 6 significant digits.
pub(super) fn num(x: f64) -> String {
    if x.is_nan() {
        return "NaN".into();
    }
    if x.is_infinite() {
        return if x > 0.0 { "∞".into() } else { "-∞".into() };
    }
    if x == 0.0 {
        return "0".into();
    }
    if x.fract() == 0.0 && x.abs() < 1e15 {
        return format!("{x}");
    }
    let e = x.abs().log10().floor() as i32;
    if (-4..6).contains(&e) {
        let s = format!("{x:.*}", (5 - e) as usize);
        s.trim_end_matches('0').trim_end_matches('.').to_string()
    } else {
        let s = format!("{x:.5e}");
        match s.split_once('e') {
            Some((m, exp)) => {
                format!("{}e{exp}", m.trim_end_matches('0').trim_end_matches('.'))
            }
            None => s,
        }
    }
}

/// A number inside a product: negative ones in parentheses.
pub(super) fn factor(x: f64) -> String {
    if x < 0.0 {
        format!("({})", num(x))
    } else {
        num(x)
    }
}
