//! Shared by the targets that read a whole input: takes what
//! `input::read_stream` collected and runs the rest of the pipeline on it
//! (timeline merge, group reconstruction, stops, assembly) and every
//! renderer into a sink, so that decoded-but-odd events reach the group
//! model and the output code too.
use kgtrace::options::Options;
use kgtrace::render::{self, Format, RenderOptions, View};

pub fn analyse_and_render(mut collected: kgtrace::input::Collected) {
    let timeline = kgtrace::timeline::merge(collected.captured, collected.logged);
    let mut histories = kgtrace::group::reconstruct(&timeline.events);
    // `rebalances` of one capture folds plain heartbeats away as they are
    // read: the groups rebuilt from what is left must be the same.
    let mut fold = kgtrace::timeline::HeartbeatFold::new();
    timeline.events.iter().cloned().for_each(|ev| fold.push(ev));
    let folded = kgtrace::group::reconstruct(&fold.finish().events);
    assert_eq!(format!("{folded:?}"), format!("{histories:?}"));
    // As `kgtrace::analyse` does: the no-rebalance explanations, then the
    // stops from the data path folded as it was read.
    kgtrace::no_rebalance::explain(
        &mut collected.inputs,
        &timeline.events,
        &[],
        &histories,
        &mut collected.diagnostics,
    );
    kgtrace::stops::apply_folded(
        &mut histories,
        &timeline.events,
        std::mem::take(&mut collected.data),
        None,
    );
    let opts = Options::analyse(Vec::new(), View::Report, Format::Table);
    // No row sink: the timeline's rows are kept in the report, as the
    // table, JSON and Markdown views keep them.
    let Ok((report, _)) = kgtrace::assemble::assemble(
        collected.inputs,
        kgtrace::assemble::ViewRows::Exchanges(collected.exchanges),
        &timeline,
        histories,
        &mut collected.diagnostics,
        &opts,
        None,
    ) else {
        return;
    };
    let ro = RenderOptions {
        color: false,
        width: None,
        brief: false,
    };
    let mut sink = std::io::sink();
    for (view, format) in [
        (View::Report, Format::Table),
        (View::Report, Format::Markdown),
        (View::Report, Format::Ndjson),
        (View::Rebalances, Format::Csv),
        (View::Groups, Format::Json),
        (View::Timeline, Format::Table),
    ] {
        let _ = render::render(&report, view, format, &ro, &mut sink);
    }
    let brief = RenderOptions {
        brief: true,
        width: Some(80),
        ..ro
    };
    let _ = render::render(&report, View::Report, Format::Table, &brief, &mut sink);
    let _ = render::render_html(&report, &mut sink);
}
