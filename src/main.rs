//! The `kgtrace` binary: parses arguments, runs the library, maps the
//! outcome to an exit code: 0 something matched, 1 nothing matched,
//! 2 error. A closed pipe (`kgtrace ... | head`) ends quietly with 0, as
//! grep and ripgrep do.

use std::io::{self, IsTerminal, Write};
use std::process::ExitCode;

use clap::Parser;
use kgtrace::cli::Cli;
use kgtrace::render::RenderOptions;

/// jemalloc, not the system's allocator: the reading threads allocate the
/// events and another thread frees them, which glibc's malloc serves
/// slowly (malloc and free were about 17 % of a dense capture's CPU
/// samples; docs/performance-log.md, "The allocator"). One arena (`narenas:1`, set in
/// `.cargo/config.toml`): the default four per core were slower here and
/// held more memory. Freed pages go back after 1 s (`dirty_decay_ms:1000`,
/// there too): held 10 s, a finished stage's buffers counted at the next
/// stage's peak. It serves the C library's own `malloc` too (the crate's
/// `unprefixed_malloc_on_supported_platforms`): glibc's malloc, which libc
/// itself still called in the run's threads, reserved 64 MiB of address
/// space for each (its per-thread arenas), and with them three of issue
/// 14's hostile shapes aborted under a 512 MiB `ulimit -v` at under 200 MB
/// resident (docs/performance-log.md, 2026-12-06 morning).
#[cfg(not(target_env = "msvc"))]
#[global_allocator]
static ALLOCATOR: tikv_jemallocator::Jemalloc = tikv_jemallocator::Jemalloc;

fn main() -> ExitCode {
    let cli = Cli::parse();
    let stdout = io::stdout();
    let is_terminal = stdout.is_terminal();
    let no_color = std::env::var_os("NO_COLOR").is_some_and(|v| !v.is_empty());
    let opts = match cli.into_options(is_terminal, no_color) {
        Ok(o) => o,
        Err(e) => return fail(&e),
    };
    let columns = std::env::var("COLUMNS").ok();
    let render_opts = RenderOptions {
        color: opts.color,
        width: kgtrace::terminal::width(opts.width, columns.as_deref()),
        brief: matches!(
            opts.command,
            kgtrace::options::Command::Report { brief: true, .. }
        ),
    };
    let mut out = io::BufWriter::new(stdout.lock());
    let result = kgtrace::run(&opts, &render_opts, &mut out)
        .and_then(|o| out.flush().map(|_| o).map_err(Into::into));
    match result {
        Ok(mut outcome) => {
            // The process ends here: the OS takes the report back at once,
            // freeing it string by string would only cost time.
            std::mem::forget(outcome.report.take());
            if !opts.quiet {
                summarise(&outcome.diagnostics);
            } else if outcome.matched == 0 {
                // Quiet, but the answer is empty: the warnings that say why
                // (an input that gave nothing, a filter that kept nothing)
                // still print; never a silent empty answer.
                warnings(&outcome.diagnostics);
            }
            if outcome.matched > 0 {
                ExitCode::SUCCESS
            } else {
                ExitCode::from(1)
            }
        }
        Err(e) if is_broken_pipe(&e) => ExitCode::SUCCESS,
        Err(e) => fail(&e),
    }
}

fn fail(e: &kgtrace::Error) -> ExitCode {
    let _ = writeln!(io::stderr(), "kgtrace: {e}");
    ExitCode::from(2)
}

fn is_broken_pipe(e: &kgtrace::Error) -> bool {
    matches!(e, kgtrace::Error::Write(io) if io.kind() == io::ErrorKind::BrokenPipe)
}

/// The warnings, then one line of diagnostics: counts per kind.
fn summarise(d: &kgtrace::Diagnostics) {
    if d.total() == 0 {
        return;
    }
    warnings(d);
    let parts: Vec<String> = d
        .counts
        .iter()
        .map(|(k, n)| format!("{n} {}", k.name()))
        .collect();
    let _ = writeln!(
        io::stderr(),
        "kgtrace: diagnostics: {} (details in --format json)",
        parts.join(", ")
    );
}

/// The warnings (inputs skipped or giving no rebalance, filters that left
/// nothing), one line each.
fn warnings(d: &kgtrace::Diagnostics) {
    for kind in kgtrace::DiagnosticKind::WARNINGS {
        for w in d.examples.iter().filter(|w| w.kind == kind) {
            let _ = writeln!(
                io::stderr(),
                "kgtrace: warning: {}: {}",
                kgtrace::render::escape_line(&w.source),
                kgtrace::render::escape_line(&w.detail)
            );
        }
        let more = d
            .count(kind)
            .saturating_sub(kgtrace::Diagnostics::EXAMPLES_PER_KIND);
        if more > 0 {
            let _ = writeln!(
                io::stderr(),
                "kgtrace: warning: {more} more {} (see --format json)",
                match kind {
                    kgtrace::DiagnosticKind::SkippedInput => "inputs skipped or empty",
                    kgtrace::DiagnosticKind::NoRebalance => "inputs with no rebalance",
                    _ => "warnings",
                }
            );
        }
    }
}
