//! Escaping for HTML and SVG, shared by [`super::html`] and [`super::svg`]
//! so neither imports the other.
//!
//! Takes: text from the inputs. Gives: the same text safe inside HTML or
//! SVG content and attribute values.

/// Escapes text for HTML and SVG content and attribute values.
pub(crate) fn escape(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for c in text.chars() {
        match c {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '"' => out.push_str("&quot;"),
            '\'' => out.push_str("&#39;"),
            // XML 1.0 forbids most control characters even escaped; show them.
            c if super::human::is_hidden(c) && !matches!(c, '\n' | '\t') => {
                out.extend(c.escape_default())
            }
            c => out.push(c),
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn markup_characters_and_control_characters_are_escaped() {
        assert_eq!(escape("a<b & \"c\""), "a&lt;b &amp; &quot;c&quot;");
        assert_eq!(escape("\u{1b}"), "\\u{1b}");
    }
}
