//! Logs go to stderr (stdout is the protocol), human-readable or one JSON object per line,
//! always through a filter so that dependencies cannot flood them.

use tracing_subscriber::EnvFilter;

#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum Format {
    Human,
    Json,
}

const DEFAULT_FILTER: &str = "warn,toolwarden=info,toolwarden_gateway=info,toolwarden_core=info";

pub fn init(format: Format, level: Option<&str>) {
    let filter = level
        .map(str::to_owned)
        .or_else(|| std::env::var("TOOLWARDEN_LOG").ok())
        .and_then(|spec| EnvFilter::try_new(spec).ok())
        .unwrap_or_else(|| EnvFilter::new(DEFAULT_FILTER));
    let builder = tracing_subscriber::fmt()
        .with_env_filter(filter)
        .with_writer(std::io::stderr)
        .with_target(false);
    let _ = match format {
        Format::Human => builder.with_ansi(false).try_init(),
        Format::Json => builder
            .json()
            .flatten_event(true)
            .with_current_span(false)
            .try_init(),
    };
}
