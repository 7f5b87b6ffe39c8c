//! Turns the measurements into medians across repetitions, ratios between configurations,
//! the targets marked met or not, a table for people and a JSON document with every figure.

use serde_json::{Value, json};
use std::collections::BTreeMap;
use std::fmt::Write;

use crate::measure::{Figures, Plan, Scenario};
use crate::stats::{median, spread};

pub struct Run {
    pub rep: usize,
    pub scenario: &'static str,
    pub result: Result<Figures, String>,
}

pub struct Settings {
    pub smoke: bool,
    pub reps: usize,
    pub plan: Plan,
    pub large_tools: usize,
    pub load_before: Option<String>,
    pub load_after: Option<String>,
    pub cpus: usize,
    pub notes: Vec<String>,
}

type Metrics = BTreeMap<&'static str, f64>;

pub struct Summary {
    order: Vec<&'static str>,
    medians: BTreeMap<&'static str, Metrics>,
    spreads: BTreeMap<&'static str, Metrics>,
    answered_by: BTreeMap<&'static str, String>,
    list_bytes: BTreeMap<&'static str, usize>,
    tools_listed: BTreeMap<&'static str, usize>,
    ratios: Vec<Ratio>,
    targets: Vec<Target>,
    failures: Vec<String>,
    notes: Vec<String>,
}

struct Ratio {
    numerator: &'static str,
    denominator: &'static str,
    metric: &'static str,
    value: f64,
}

struct Target {
    what: &'static str,
    figure: Option<f64>,
    unit: &'static str,
    bound: &'static str,
    met: Option<bool>,
    note: Option<String>,
}

/// Configuration pairs compared, numerator first.
const PAIRS: [(&str, &str); 5] = [
    ("warden", "relay"),
    ("warden", "fastmcp"),
    ("relay", "direct"),
    ("warden-invalid", "direct"),
    ("warden-large", "relay-large"),
];

const RATIO_METRICS: [&str; 8] = [
    "seq_p50_us",
    "seq_p90_us",
    "seq_p99_us",
    "throughput_calls_per_s",
    "peak_rss_kib",
    "rss_anon_kib",
    "spawn_to_ready_us",
    "list_median_us",
];

pub fn summarise(scenarios: &[Scenario], runs: &[Run], settings: &Settings) -> Summary {
    let order: Vec<&'static str> = scenarios.iter().map(|scenario| scenario.name).collect();
    let mut medians = BTreeMap::new();
    let mut spreads = BTreeMap::new();
    let mut answered_by = BTreeMap::new();
    let mut list_bytes = BTreeMap::new();
    let mut tools_listed = BTreeMap::new();
    let mut failures = Vec::new();
    for &name in &order {
        let figures: Vec<&Figures> = runs
            .iter()
            .filter(|run| run.scenario == name)
            .filter_map(|run| run.result.as_ref().ok())
            .collect();
        for run in runs.iter().filter(|run| run.scenario == name) {
            if let Err(error) = &run.result {
                failures.push(format!("{name} (rep {}): {error}", run.rep));
            }
        }
        let mut by_metric: BTreeMap<&'static str, Vec<f64>> = BTreeMap::new();
        for figure in &figures {
            for (metric, value) in figure.metrics() {
                if let Some(value) = value {
                    by_metric.entry(metric).or_default().push(value);
                }
            }
        }
        let scenario_medians: Metrics = by_metric
            .iter()
            .filter_map(|(metric, values)| Some((*metric, median(values)?)))
            .collect();
        let scenario_spreads: Metrics = by_metric
            .iter()
            .filter_map(|(metric, values)| Some((*metric, spread(values)?)))
            .collect();
        medians.insert(name, scenario_medians);
        spreads.insert(name, scenario_spreads);
        if let Some(first) = figures.first() {
            answered_by.insert(name, first.answered_by.clone());
            list_bytes.insert(name, first.list_bytes);
            tools_listed.insert(name, first.tools_listed);
        }
    }
    let figure = |scenario: &str, metric: &str| -> Option<f64> {
        medians.get(scenario)?.get(metric).copied()
    };
    let mut ratios = Vec::new();
    for (numerator, denominator) in PAIRS {
        for metric in RATIO_METRICS {
            if let (Some(top), Some(bottom)) =
                (figure(numerator, metric), figure(denominator, metric))
                && bottom != 0.0
            {
                ratios.push(Ratio {
                    numerator,
                    denominator,
                    metric,
                    value: top / bottom,
                });
            }
        }
    }
    let ratio = |numerator: &str, denominator: &str, metric: &str| {
        ratios
            .iter()
            .find(|ratio| {
                ratio.numerator == numerator
                    && ratio.denominator == denominator
                    && ratio.metric == metric
            })
            .map(|ratio| ratio.value)
    };
    let at_most = |value: Option<f64>, bound: f64| value.map(|value| value <= bound);
    let mut targets = vec![
        Target {
            what: "sequential p50, warden / relay",
            figure: ratio("warden", "relay", "seq_p50_us"),
            unit: "x",
            bound: "<= 1.2x",
            met: at_most(ratio("warden", "relay", "seq_p50_us"), 1.2),
            note: None,
        },
        Target {
            what: "sequential p99, warden / relay",
            figure: ratio("warden", "relay", "seq_p99_us"),
            unit: "x",
            bound: "<= 1.2x",
            met: at_most(ratio("warden", "relay", "seq_p99_us"), 1.2),
            note: None,
        },
        Target {
            what: "calls/s at 32 in flight, warden / relay",
            figure: ratio("warden", "relay", "throughput_calls_per_s"),
            unit: "x",
            bound: ">= 0.8x",
            met: ratio("warden", "relay", "throughput_calls_per_s").map(|value| value >= 0.8),
            note: None,
        },
    ];
    let invalid_answerer = answered_by.get("warden-invalid").cloned();
    let invalid_ratio = ratio("warden-invalid", "direct", "seq_p50_us");
    targets.push(Target {
        what: "invalid call via warden p50 / direct valid p50",
        figure: invalid_ratio,
        unit: "x",
        bound: "< 1.0x, answered by the warden",
        met: invalid_ratio
            .map(|value| value < 1.0 && invalid_answerer.as_deref() == Some("warden")),
        note: invalid_answerer
            .filter(|who| who != "warden")
            .map(|who| format!("answered by the {who}: this build does not validate arguments")),
    });
    let peak_mib = ["warden", "warden-invalid"]
        .iter()
        .filter_map(|name| figure(name, "peak_rss_kib"))
        .fold(None, |max: Option<f64>, kib| {
            Some(max.map_or(kib, |max| max.max(kib)))
        })
        .map(|kib| kib / 1024.0);
    targets.push(Target {
        what: "peak RSS of toolwarden under load",
        figure: peak_mib,
        unit: "MiB",
        bound: "<= 10 MiB",
        met: at_most(peak_mib, 10.0),
        note: None,
    });
    let ready_extra = figure("warden", "spawn_to_ready_us")
        .zip(figure("direct", "spawn_to_ready_us"))
        .map(|(warden, direct)| (warden - direct) / 1000.0);
    targets.push(Target {
        what: "spawn to ready, warden minus direct",
        figure: ready_extra,
        unit: "ms",
        bound: "<= 20 ms",
        met: at_most(ready_extra, 20.0),
        note: None,
    });
    let catalog_rate = catalog_rate(&figure, &list_bytes);
    targets.push(Target {
        what: "tools/list processing, end to end (bytes / extra time over the relay)",
        figure: catalog_rate,
        unit: "MB/s",
        bound: ">= 200 MB/s",
        met: catalog_rate.map(|rate| rate >= 200.0),
        note: Some("the scan alone is measured by the core micro-benchmarks".to_owned()),
    });
    Summary {
        order,
        medians,
        spreads,
        answered_by,
        list_bytes,
        tools_listed,
        ratios,
        targets,
        failures,
        notes: settings.notes.clone(),
    }
}

/// Bytes of the large listing over the extra time the warden took to pass it on; infinite
/// when the difference drowns in noise.
fn catalog_rate(
    figure: &impl Fn(&str, &str) -> Option<f64>,
    list_bytes: &BTreeMap<&'static str, usize>,
) -> Option<f64> {
    let warden = figure("warden-large", "list_median_us")?;
    let relay = figure("relay-large", "list_median_us")?;
    let bytes = *list_bytes.get("warden-large")? as f64;
    let extra_us = warden - relay;
    Some(if extra_us <= 0.0 {
        f64::INFINITY
    } else {
        bytes / extra_us
    })
}

pub fn table(summary: &Summary) -> String {
    let mut out = String::new();
    let _ = writeln!(
        out,
        "{:<16} {:>9} {:>10} {:>9} {:>9} {:>9} {:>10} {:>8} {:>9} {:>9}  answered by",
        "config",
        "ready ms",
        "list us",
        "p50 us",
        "p90 us",
        "p99 us",
        "calls/s",
        "RSS MiB",
        "anon MiB",
        "p50 +/-",
    );
    for name in &summary.order {
        let Some(metrics) = summary
            .medians
            .get(name)
            .filter(|metrics| !metrics.is_empty())
        else {
            let _ = writeln!(out, "{name:<16} (failed)");
            continue;
        };
        let cell = |metric: &str, scale: f64, decimals: usize| {
            metrics.get(metric).map_or_else(
                || "-".to_owned(),
                |value| format!("{:.*}", decimals, value * scale),
            )
        };
        let noise = summary
            .spreads
            .get(name)
            .and_then(|spreads| spreads.get("seq_p50_us"))
            .map_or_else(
                || "-".to_owned(),
                |spread| format!("{:.0}%", spread * 100.0),
            );
        let _ = writeln!(
            out,
            "{:<16} {:>9} {:>10} {:>9} {:>9} {:>9} {:>10} {:>8} {:>9} {:>9}  {}",
            name,
            cell("spawn_to_ready_us", 0.001, 1),
            cell("list_median_us", 1.0, 0),
            cell("seq_p50_us", 1.0, 1),
            cell("seq_p90_us", 1.0, 1),
            cell("seq_p99_us", 1.0, 1),
            cell("throughput_calls_per_s", 1.0, 0),
            cell("peak_rss_kib", 1.0 / 1024.0, 1),
            cell("rss_anon_kib", 1.0 / 1024.0, 1),
            noise,
            summary.answered_by.get(name).map_or("-", String::as_str),
        );
    }
    for (name, bytes) in &summary.list_bytes {
        if name.ends_with("-large") {
            let tools = summary.tools_listed.get(name).copied().unwrap_or(0);
            let _ = writeln!(out, "{name}: tools/list of {tools} tools, {bytes} bytes");
        }
    }
    let _ = writeln!(out, "\nratios (medians):");
    for (numerator, denominator) in PAIRS {
        let line: Vec<String> = summary
            .ratios
            .iter()
            .filter(|ratio| ratio.numerator == numerator && ratio.denominator == denominator)
            .map(|ratio| format!("{} {:.2}x", short(ratio.metric), ratio.value))
            .collect();
        if !line.is_empty() {
            let _ = writeln!(out, "  {numerator}/{denominator}: {}", line.join(", "));
        }
    }
    let _ = writeln!(out, "\ntargets:");
    for target in &summary.targets {
        let verdict = match target.met {
            Some(true) => "met",
            Some(false) => "NOT MET",
            None => "not measured",
        };
        let figure = target.figure.map_or_else(
            || "-".to_owned(),
            |value| format!("{value:.2}{}", unit_suffix(target.unit)),
        );
        let note = target
            .note
            .as_ref()
            .map_or_else(String::new, |note| format!(" ({note})"));
        let _ = writeln!(
            out,
            "  [{verdict}] {}: {figure} (target {}){note}",
            target.what, target.bound
        );
    }
    for note in &summary.notes {
        let _ = writeln!(out, "note: {note}");
    }
    for failure in &summary.failures {
        let _ = writeln!(out, "FAILED: {failure}");
    }
    out
}

fn unit_suffix(unit: &str) -> String {
    if unit == "x" {
        unit.to_owned()
    } else {
        format!(" {unit}")
    }
}

fn short(metric: &str) -> &str {
    match metric {
        "seq_p50_us" => "p50",
        "seq_p90_us" => "p90",
        "seq_p99_us" => "p99",
        "throughput_calls_per_s" => "calls/s",
        "peak_rss_kib" => "RSS",
        "rss_anon_kib" => "anon RSS",
        "spawn_to_ready_us" => "ready",
        "list_median_us" => "tools/list",
        other => other,
    }
}

pub fn json(scenarios: &[Scenario], runs: &[Run], summary: &Summary, settings: &Settings) -> Value {
    let runs: Vec<Value> = runs
        .iter()
        .map(|run| match &run.result {
            Ok(figures) => json!({"rep": run.rep, "config": run.scenario, "figures": figures}),
            Err(error) => json!({"rep": run.rep, "config": run.scenario, "error": error}),
        })
        .collect();
    let ratios: Vec<Value> = summary
        .ratios
        .iter()
        .map(|ratio| {
            json!({
                "numerator": ratio.numerator,
                "denominator": ratio.denominator,
                "metric": ratio.metric,
                "ratio": ratio.value,
            })
        })
        .collect();
    let targets: Vec<Value> = summary
        .targets
        .iter()
        .map(|target| {
            json!({
                "what": target.what,
                // JSON has no infinity: an immeasurably small cost is written as null with met.
                "figure": target.figure.filter(|value| value.is_finite()),
                "unit": target.unit,
                "bound": target.bound,
                "met": target.met,
                "note": target.note,
            })
        })
        .collect();
    let unix_seconds = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |since| since.as_secs());
    json!({
        "benchmark": "toolwarden-bench",
        "version": env!("CARGO_PKG_VERSION"),
        "finished_unix": unix_seconds,
        "machine": {
            "cpus": settings.cpus,
            "load_average_before": settings.load_before,
            "load_average_after": settings.load_after,
        },
        "settings": {
            "smoke": settings.smoke,
            "reps": settings.reps,
            "warmup_calls": settings.plan.warmup_calls,
            "sequential_calls": settings.plan.calls,
            "throughput_seconds": settings.plan.window.as_secs_f64(),
            "in_flight": settings.plan.in_flight,
            "tools_list_repeats": settings.plan.list_repeats,
            "large_catalog_tools": settings.large_tools,
        },
        "configs": scenarios,
        "runs": runs,
        "medians": summary.medians,
        "spread_across_reps": summary.spreads,
        "answered_by": summary.answered_by,
        "ratios": ratios,
        "targets": targets,
        "notes": summary.notes,
        "failures": summary.failures,
    })
}
