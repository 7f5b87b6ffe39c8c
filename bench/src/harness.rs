//! The `run` subcommand: builds the configurations, measures them interleaved (every
//! configuration once per repetition, in a rotating order), and hands the figures to the report.

use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::Duration;

use crate::BenchError;
use crate::measure::{Calls, Figures, Plan, Scenario, measure};
use crate::report::{self, Run};

#[derive(Debug, Clone)]
pub struct RunOptions {
    pub smoke: bool,
    pub out: Option<PathBuf>,
    pub reps: Option<usize>,
    pub calls: Option<usize>,
    pub seconds: Option<f64>,
    pub large_tools: usize,
    pub fastmcp: bool,
    pub toolwarden: Option<PathBuf>,
    /// Measure only these configurations (all when empty).
    pub only: Vec<String>,
}

impl Default for RunOptions {
    fn default() -> Self {
        RunOptions {
            smoke: false,
            out: None,
            reps: None,
            calls: None,
            seconds: None,
            large_tools: 500,
            fastmcp: true,
            toolwarden: None,
            only: Vec::new(),
        }
    }
}

const IN_FLIGHT: usize = 32;
const BUILD_HINT: &str = "build both with `cargo build --release -p toolwarden -p toolwarden-bench` (or run `bench/run`)";

/// Runs the benchmark; returns whether every measurement succeeded.
pub fn run(options: &RunOptions) -> Result<bool, BenchError> {
    let own =
        std::env::current_exe().map_err(|error| BenchError::io("find our own path", error))?;
    let exe_dir = own
        .parent()
        .ok_or_else(|| BenchError::Setup("our own path has no directory".to_owned()))?
        .to_path_buf();
    let toolwarden = options
        .toolwarden
        .clone()
        .unwrap_or_else(|| exe_dir.join("toolwarden"));
    if !toolwarden.is_file() {
        return Err(BenchError::Setup(format!(
            "no toolwarden binary at {}: {BUILD_HINT}",
            toolwarden.display()
        )));
    }
    if cfg!(debug_assertions) {
        eprintln!("warning: this is a debug build of the benchmark; {BUILD_HINT}");
    }
    let target_dir = exe_dir.parent().unwrap_or(&exe_dir).to_path_buf();
    let out = options
        .out
        .clone()
        .unwrap_or_else(|| target_dir.join("bench").join("results.json"));
    let logs = out
        .parent()
        .map_or_else(|| PathBuf::from("logs"), |dir| dir.join("logs"));
    std::fs::create_dir_all(&logs)
        .map_err(|error| BenchError::io(format!("create {}", logs.display()), error))?;

    let plan = plan(options);
    let reps = options
        .reps
        .unwrap_or(if options.smoke { 1 } else { 5 })
        .max(1);
    let mut notes = Vec::new();
    let fastmcp = if options.smoke {
        notes.push("fastmcp skipped: smoke mode".to_owned());
        None
    } else if !options.fastmcp {
        notes.push("fastmcp skipped: --no-fastmcp".to_owned());
        None
    } else {
        match fastmcp_proxy() {
            Ok(command) => Some(command),
            Err(why) => {
                notes.push(format!("fastmcp skipped: {why}"));
                None
            }
        }
    };
    let mut scenarios = scenarios(&own, &toolwarden, options.large_tools, fastmcp);
    if !options.only.is_empty() {
        for wanted in &options.only {
            if !scenarios.iter().any(|scenario| scenario.name == wanted) {
                return Err(BenchError::Usage(format!(
                    "no configuration named `{wanted}`"
                )));
            }
        }
        scenarios.retain(|scenario| options.only.iter().any(|wanted| wanted == scenario.name));
    }

    let load_before = load_average();
    let mut runs: Vec<Run> = Vec::new();
    for rep in 1..=reps {
        // Rotating the order keeps a slow drift of the machine from always hitting one config.
        let offset = (rep - 1) % scenarios.len();
        for scenario in scenarios.iter().cycle().skip(offset).take(scenarios.len()) {
            let log = logs.join(format!("{}-rep{rep}.log", scenario.name));
            let result = measure(scenario, &plan, &log);
            match &result {
                Ok(figures) => eprintln!("rep {rep} {:<16} {}", scenario.name, brief(figures)),
                Err(error) => eprintln!(
                    "rep {rep} {:<16} FAILED: {error} (stderr in {})",
                    scenario.name,
                    log.display()
                ),
            }
            runs.push(Run {
                rep,
                scenario: scenario.name,
                result: result.map_err(|error| error.to_string()),
            });
        }
    }
    let load_after = load_average();

    let settings = report::Settings {
        smoke: options.smoke,
        reps,
        plan,
        large_tools: options.large_tools,
        load_before,
        load_after,
        cpus: std::thread::available_parallelism().map_or(0, usize::from),
        notes,
    };
    let summary = report::summarise(&scenarios, &runs, &settings);
    println!("{}", report::table(&summary));
    let json = report::json(&scenarios, &runs, &summary, &settings);
    write_json(&out, &json)?;
    println!("every figure: {}", out.display());
    Ok(runs.iter().all(|run| run.result.is_ok()))
}

fn plan(options: &RunOptions) -> Plan {
    let (calls, warmup, seconds, list_repeats) = if options.smoke {
        (300, 30, 0.3, 2)
    } else {
        (2000, 200, 3.0, 5)
    };
    let calls = options.calls.unwrap_or(calls).max(1);
    let seconds = options.seconds.unwrap_or(seconds).clamp(0.05, 60.0);
    Plan {
        warmup_calls: warmup,
        calls,
        window: Duration::from_secs_f64(seconds),
        in_flight: IN_FLIGHT,
        list_repeats,
        // Generous: fastmcp at a few ms a call, plus the window, plus start-up.
        limit: Duration::from_secs_f64(60.0 + seconds + calls as f64 * 0.02),
    }
}

fn scenarios(
    own: &Path,
    toolwarden: &Path,
    large_tools: usize,
    fastmcp: Option<Vec<String>>,
) -> Vec<Scenario> {
    let own = own.to_string_lossy().into_owned();
    let toolwarden = toolwarden.to_string_lossy().into_owned();
    let upstream = vec![own.clone(), "upstream".to_owned()];
    let large_upstream = vec![
        own.clone(),
        "upstream".to_owned(),
        "--tools".to_owned(),
        large_tools.to_string(),
    ];
    let relay = |server: &[String]| {
        let mut command = vec![own.clone(), "relay".to_owned(), "--".to_owned()];
        command.extend_from_slice(server);
        command
    };
    let warden = |server: &[String]| {
        let mut command = vec![toolwarden.clone(), "run".to_owned(), "--".to_owned()];
        command.extend_from_slice(server);
        command
    };
    let mut scenarios = vec![
        Scenario {
            name: "direct",
            about: "the upstream alone, no process in between",
            command: upstream.clone(),
            calls: Calls::Valid,
            throughput: true,
            rss_of: "upstream",
        },
        Scenario {
            name: "relay",
            about: "one extra process copying bytes both ways: the floor",
            command: relay(&upstream),
            calls: Calls::Valid,
            throughput: true,
            rss_of: "relay",
        },
        Scenario {
            name: "warden",
            about: "toolwarden run, valid calls forwarded to the upstream",
            command: warden(&upstream),
            calls: Calls::Valid,
            throughput: true,
            rss_of: "toolwarden",
        },
        Scenario {
            name: "warden-invalid",
            about: "toolwarden run, calls with a wrong argument type (answered by the warden when it validates)",
            command: warden(&upstream),
            calls: Calls::Invalid,
            throughput: true,
            rss_of: "toolwarden",
        },
        Scenario {
            name: "relay-large",
            about: "the relay in front of an upstream with a large tools/list",
            command: relay(&large_upstream),
            calls: Calls::Valid,
            throughput: false,
            rss_of: "relay",
        },
        Scenario {
            name: "warden-large",
            about: "toolwarden run in front of an upstream with a large tools/list",
            command: warden(&large_upstream),
            calls: Calls::Valid,
            throughput: false,
            rss_of: "toolwarden",
        },
    ];
    if let Some(mut proxy) = fastmcp {
        proxy.extend(upstream);
        scenarios.push(Scenario {
            name: "fastmcp",
            about: "a fastmcp proxy (python) of the same upstream",
            command: proxy,
            calls: Calls::Valid,
            throughput: true,
            rss_of: "python (fastmcp)",
        });
    }
    scenarios
}

/// The command that starts the fastmcp proxy, or why there is none.
fn fastmcp_proxy() -> Result<Vec<String>, String> {
    let python = std::env::var("TOOLWARDEN_BENCH_PYTHON").unwrap_or_else(|_| "python3".to_owned());
    let script = Path::new(env!("CARGO_MANIFEST_DIR")).join("fastmcp_proxy.py");
    if !script.is_file() {
        return Err(format!("{} is missing", script.display()));
    }
    let probe = Command::new(&python)
        .args(["-c", "import fastmcp"])
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .status();
    match probe {
        Ok(status) if status.success() => Ok(vec![python, script.to_string_lossy().into_owned()]),
        Ok(_) => Err(format!(
            "`{python} -c 'import fastmcp'` failed (install it with `pip install fastmcp`)"
        )),
        Err(error) => Err(format!("no {python}: {error}")),
    }
}

fn brief(figures: &Figures) -> String {
    let throughput = figures
        .throughput_calls_per_s
        .map_or_else(String::new, |calls| format!(" {calls:.0} calls/s"));
    format!(
        "ready {:.1} ms, p50 {:.1} us, p99 {:.1} us{throughput}",
        figures.spawn_to_ready_us / 1000.0,
        figures.seq_p50_us,
        figures.seq_p99_us
    )
}

fn load_average() -> Option<String> {
    std::fs::read_to_string("/proc/loadavg").ok().map(|text| {
        text.split_whitespace()
            .take(3)
            .collect::<Vec<_>>()
            .join(" ")
    })
}

fn write_json(path: &Path, json: &serde_json::Value) -> Result<(), BenchError> {
    if let Some(dir) = path.parent() {
        std::fs::create_dir_all(dir)
            .map_err(|error| BenchError::io(format!("create {}", dir.display()), error))?;
    }
    let text = serde_json::to_string_pretty(json)
        .map_err(|error| BenchError::Setup(format!("could not render the results: {error}")))?;
    std::fs::write(path, text + "\n")
        .map_err(|error| BenchError::io(format!("write {}", path.display()), error))
}
