//! A small document model shared by the Markdown, HTML and terminal reports.
//!
//! Takes nothing; [`crate::render::incident`] and [`crate::render::grids`]
//! build these values from a report. Gives: [`Block`]s of styled [`Span`]s
//! that each writer turns into its own syntax, so the three reports cannot
//! drift apart (hyperfine's shared `MarkupExporter`, one level up).

/// A colour role; each writer maps it to ANSI colours or CSS.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Tone {
    /// No colour.
    Plain,
    /// Less important (expected rebalances, absent values).
    Muted,
    /// Kafka errors.
    Error,
    /// Storms, stragglers, rebalances that never completed.
    Warning,
    /// A rebalance's trigger, coloured by family.
    Trigger(TriggerClass),
}

/// Families of rebalance triggers, so a reader sees at a glance whether a
/// rebalance came from members arriving, leaving, timing out or changing.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum TriggerClass {
    /// A member (or the leader) (re)joined.
    Join,
    /// A member left or a static member was replaced or fenced.
    Leave,
    /// The coordinator evicted someone (session, poll or sync timeout).
    Timeout,
    /// Metadata, subscription or protocol changed.
    Change,
    /// The coordinator moved.
    Coordinator,
    /// A previous round failed or the group is over capacity.
    Failure,
    /// No trigger could be named.
    Unknown,
}

impl TriggerClass {
    /// The family of a trigger kind (the names in `report::Trigger::kind`).
    pub(crate) fn of(kind: &str) -> TriggerClass {
        match kind {
            "member_joined" | "leader_rejoined" => TriggerClass::Join,
            "member_left" | "static_member_replaced" | "static_member_fenced" => {
                TriggerClass::Leave
            }
            "session_timeout" | "poll_timeout" | "pending_sync_expired" => TriggerClass::Timeout,
            "metadata_changed" | "subscription_changed" | "protocol_migration" => {
                TriggerClass::Change
            }
            "coordinator_changed" => TriggerClass::Coordinator,
            "previous_rebalance_failed" | "group_over_capacity" | "storage_error" => {
                TriggerClass::Failure
            }
            _ => TriggerClass::Unknown,
        }
    }

    /// Every class, in legend order.
    pub(crate) const ALL: [TriggerClass; 7] = [
        TriggerClass::Join,
        TriggerClass::Leave,
        TriggerClass::Timeout,
        TriggerClass::Change,
        TriggerClass::Coordinator,
        TriggerClass::Failure,
        TriggerClass::Unknown,
    ];

    /// CSS colour for HTML and SVG (readable on white, distinct for the
    /// common forms of colour blindness as far as seven hues allow).
    pub(crate) fn css(self) -> &'static str {
        match self {
            TriggerClass::Join => "#2f6fb3",
            TriggerClass::Leave => "#e07b00",
            TriggerClass::Timeout => "#d0312d",
            TriggerClass::Change => "#7b4fb0",
            TriggerClass::Coordinator => "#138a8a",
            TriggerClass::Failure => "#a6355f",
            TriggerClass::Unknown => "#7a7f87",
        }
    }

    /// Legend word.
    pub(crate) fn name(self) -> &'static str {
        match self {
            TriggerClass::Join => "joined",
            TriggerClass::Leave => "left / replaced",
            TriggerClass::Timeout => "timed out",
            TriggerClass::Change => "metadata / subscription",
            TriggerClass::Coordinator => "coordinator moved",
            TriggerClass::Failure => "failed round / capacity",
            TriggerClass::Unknown => "unknown",
        }
    }
}

/// How a span's text is set.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Style {
    /// Running text.
    Plain,
    /// Identifiers, file references, kinds: shown literally.
    Code,
    /// Emphasis.
    Strong,
}

/// A run of text with one style and tone.
#[derive(Clone, Debug, PartialEq)]
pub(crate) struct Span {
    /// The text, unescaped; writers escape it.
    pub(crate) text: String,
    /// How it is set.
    pub(crate) style: Style,
    /// Its colour role.
    pub(crate) tone: Tone,
}

impl Span {
    /// Running text.
    pub(crate) fn plain(text: impl Into<String>) -> Span {
        Span {
            text: text.into(),
            style: Style::Plain,
            tone: Tone::Plain,
        }
    }

    /// Literal text (ids, kinds, file references).
    pub(crate) fn code(text: impl Into<String>) -> Span {
        Span {
            text: text.into(),
            style: Style::Code,
            tone: Tone::Plain,
        }
    }

    /// Emphasised text.
    pub(crate) fn strong(text: impl Into<String>) -> Span {
        Span {
            text: text.into(),
            style: Style::Strong,
            tone: Tone::Plain,
        }
    }

    /// The same span with a colour role.
    pub(crate) fn tone(mut self, tone: Tone) -> Span {
        self.tone = tone;
        self
    }
}

/// A line of spans.
pub(crate) type Line = Vec<Span>;

/// A table: headers and rows of one span per cell.
#[derive(Clone, Debug, Default, PartialEq)]
pub(crate) struct Grid {
    /// Column names.
    pub(crate) headers: Vec<&'static str>,
    /// Rows, each as long as `headers`.
    pub(crate) rows: Vec<Vec<Span>>,
    /// Columns a narrow terminal may hide, first to go first.
    pub(crate) droppable: Vec<&'static str>,
}

impl Grid {
    /// A grid whose columns must all be shown.
    pub(crate) fn new(headers: Vec<&'static str>, rows: Vec<Vec<Span>>) -> Grid {
        Grid {
            headers,
            rows,
            droppable: Vec::new(),
        }
    }

    /// The same grid, allowing a narrow terminal to hide `columns`.
    pub(crate) fn droppable(mut self, columns: &[&'static str]) -> Grid {
        self.droppable = columns.to_vec();
        self
    }

    /// The grid without the column named `name`, if it has one.
    pub(crate) fn without_named(mut self, name: &str) -> Grid {
        if let Some(i) = self.headers.iter().position(|h| *h == name) {
            self.remove_column(i);
        }
        self
    }

    /// Takes column `index` out, in place.
    pub(crate) fn remove_column(&mut self, index: usize) {
        self.headers.remove(index);
        for row in &mut self.rows {
            if index < row.len() {
                row.remove(index);
            }
        }
    }
}

/// One block of a report.
#[derive(Clone, Debug, PartialEq)]
pub(crate) enum Block {
    /// A heading, level 1 to 4.
    Heading(u8, Line),
    /// A paragraph.
    Paragraph(Line),
    /// `name: value` pairs.
    Fields(Vec<(&'static str, Line)>),
    /// A bullet list.
    List(Vec<Line>),
    /// A table.
    Grid(Grid),
    /// The timeline picture of one group (HTML draws it; text formats skip
    /// it).
    Picture(String),
    /// A Mermaid chart's source (Markdown writes it as a ```mermaid block;
    /// HTML has its own pictures and text has none, so they skip it).
    Chart(String),
}

/// The text of a line without styling.
pub(crate) fn plain_text(line: &[Span]) -> String {
    line.iter().map(|s| s.text.as_str()).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn trigger_kinds_fall_into_families() {
        assert_eq!(TriggerClass::of("member_joined"), TriggerClass::Join);
        assert_eq!(TriggerClass::of("session_timeout"), TriggerClass::Timeout);
        assert_eq!(
            TriggerClass::of("static_member_fenced"),
            TriggerClass::Leave
        );
        assert_eq!(TriggerClass::of("something_new"), TriggerClass::Unknown);
    }

    #[test]
    fn every_family_has_its_own_colour() {
        let mut colours: Vec<_> = TriggerClass::ALL.iter().map(|c| c.css()).collect();
        colours.sort();
        colours.dedup();
        assert_eq!(colours.len(), TriggerClass::ALL.len());
    }
}
