//! `toolwarden-bench`: measures what toolwarden costs against a direct connection, a plain byte
//! relay and a fastmcp proxy, in one process tree and one run.
//!
//! ```text
//! toolwarden-bench run [--smoke] [--out FILE] [--reps N] [--calls N] [--seconds S]
//!                      [--large-tools N] [--no-fastmcp] [--toolwarden PATH] [--only A,B]
//! toolwarden-bench upstream [--tools N]
//! toolwarden-bench relay -- CMD [ARGS...]
//! ```

mod client;
mod harness;
mod measure;
mod relay;
mod report;
mod stats;
mod stdio;
mod upstream;

use std::path::PathBuf;
use std::process::ExitCode;

#[derive(Debug, thiserror::Error)]
pub enum BenchError {
    #[error("{0}")]
    Usage(String),
    #[error("{0}")]
    Setup(String),
    #[error("{0}")]
    Protocol(String),
    #[error("could not {what}: {source}")]
    Io {
        what: String,
        source: std::io::Error,
    },
}

impl BenchError {
    pub fn io(what: impl Into<String>, source: std::io::Error) -> BenchError {
        BenchError::Io {
            what: what.into(),
            source,
        }
    }
}

const USAGE: &str = "usage:
  toolwarden-bench run [--smoke] [--out FILE] [--reps N] [--calls N] [--seconds S]
                       [--large-tools N] [--no-fastmcp] [--toolwarden PATH] [--only A,B]
  toolwarden-bench upstream [--tools N]
  toolwarden-bench relay -- CMD [ARGS...]";

fn main() -> ExitCode {
    let args: Vec<String> = std::env::args().skip(1).collect();
    match dispatch(&args) {
        Ok(code) => code,
        Err(error @ BenchError::Usage(_)) => {
            eprintln!("toolwarden-bench: {error}\n{USAGE}");
            ExitCode::from(2)
        }
        Err(error) => {
            eprintln!("toolwarden-bench: {error}");
            ExitCode::from(1)
        }
    }
}

fn dispatch(args: &[String]) -> Result<ExitCode, BenchError> {
    let Some((command, rest)) = args.split_first() else {
        return Err(BenchError::Usage("no subcommand".to_owned()));
    };
    match command.as_str() {
        "run" => {
            let options = parse_run(rest)?;
            let all_ran = harness::run(&options)?;
            Ok(if all_ran {
                ExitCode::SUCCESS
            } else {
                ExitCode::from(1)
            })
        }
        "upstream" => {
            let tools = match rest {
                [] => 2,
                [flag, count] if flag == "--tools" => parse_number(flag, count)?,
                _ => {
                    return Err(BenchError::Usage(
                        "upstream takes only --tools N".to_owned(),
                    ));
                }
            };
            upstream::serve(tools).map_err(|error| BenchError::io("serve", error))?;
            Ok(ExitCode::SUCCESS)
        }
        "relay" => {
            let command = match rest.split_first() {
                Some((separator, command)) if separator == "--" && !command.is_empty() => command,
                _ => return Err(BenchError::Usage("relay needs -- CMD".to_owned())),
            };
            let code = relay::run(command).map_err(|error| BenchError::io("relay", error))?;
            Ok(ExitCode::from(u8::try_from(code).unwrap_or(1)))
        }
        "-h" | "--help" | "help" => {
            println!("{USAGE}");
            Ok(ExitCode::SUCCESS)
        }
        other => Err(BenchError::Usage(format!("unknown subcommand `{other}`"))),
    }
}

fn parse_run(args: &[String]) -> Result<harness::RunOptions, BenchError> {
    let mut options = harness::RunOptions::default();
    let mut args = args.iter();
    while let Some(flag) = args.next() {
        let mut value = || {
            args.next()
                .ok_or_else(|| BenchError::Usage(format!("{flag} needs a value")))
        };
        match flag.as_str() {
            "--smoke" => options.smoke = true,
            "--no-fastmcp" => options.fastmcp = false,
            "--out" => options.out = Some(PathBuf::from(value()?)),
            "--toolwarden" => options.toolwarden = Some(PathBuf::from(value()?)),
            "--only" => {
                options.only = value()?.split(',').map(str::to_owned).collect();
            }
            "--reps" => options.reps = Some(parse_number(flag, value()?)?),
            "--calls" => options.calls = Some(parse_number(flag, value()?)?),
            "--large-tools" => options.large_tools = parse_number(flag, value()?)?,
            "--seconds" => {
                let text = value()?;
                let seconds: f64 = text.parse().map_err(|_| {
                    BenchError::Usage(format!("--seconds needs a number, not `{text}`"))
                })?;
                options.seconds = Some(seconds);
            }
            other => return Err(BenchError::Usage(format!("unknown option `{other}`"))),
        }
    }
    Ok(options)
}

fn parse_number(flag: &str, text: &str) -> Result<usize, BenchError> {
    text.parse()
        .map_err(|_| BenchError::Usage(format!("{flag} needs a whole number, not `{text}`")))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn strings(args: &[&str]) -> Vec<String> {
        args.iter().map(|arg| (*arg).to_owned()).collect()
    }

    #[test]
    fn run_options_parse() {
        let options = parse_run(&strings(&["--smoke", "--reps", "2", "--seconds", "0.5"])).unwrap();
        assert!(options.smoke);
        assert_eq!(options.reps, Some(2));
        assert_eq!(options.seconds, Some(0.5));
        assert!(parse_run(&strings(&["--reps"])).is_err());
        assert!(parse_run(&strings(&["--bogus"])).is_err());
        assert!(parse_run(&strings(&["--calls", "many"])).is_err());
    }
}
