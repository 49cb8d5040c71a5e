//! `safetensors-nano`: inspect, verify, diff, edit, merge and split safetensors files from the command line.
//!
//! Exit codes: 0 success, 1 a problem with a file (invalid, truncated,
//! unreadable, not writable), 2 a usage error, 130 Ctrl-C (143 SIGTERM) during a write.

use std::process::ExitCode;

use clap::{CommandFactory, Parser, Subcommand};

mod commands;
mod file;
mod hash;
mod model;
mod output;
mod progress;
#[cfg(feature = "http")]
mod remote;
mod sharded;
mod source;
mod write;

use commands::{diff, edit, inspect, merge, split, verify};
use write::signal;

/// The grammar every subcommand shares (inputs, outputs, `--json`), shown
/// after the top-level help and each subcommand's.
macro_rules! grammar {
    () => {
        "Every command reads a model the same way: a safetensors file, or a sharded checkpoint's \
*.index.json (its shards as one model, checked against the index), each a path, an http(s):// URL or a \
Hub name hf://org/name[@revision][/file] (read by HTTP ranges and streamed, never held whole; a \
failed request or a broken answer is tried again twice, from where it stopped; \
environment: HF_ENDPOINT, default https://huggingface.co; HF_TOKEN).\n\n\
Output: what a command writes is named by -o (merge, split) or its last positional argument (edit), \
written through a temporary file and renamed when complete. --json prints JSON Lines on stdout: \
one document per line (per file for inspect and verify, one for diff, edit, merge and split), each \
with \"ok\"; a failure is {\"ok\":false,\"error\":{\"kind\",\"message\",\"offset\",\"tensor\"}} or, for verify, \
{\"file\",\"ok\":false,\"problems\":[…]}."
    };
}

/// Inspect, verify, compare, edit, merge and split safetensors files, streamed:
/// memory stays at a few buffers whatever the file size; every file written
/// appears complete or not at all.
#[derive(Parser, Debug)]
#[command(
    name = "safetensors-nano",
    version,
    after_help = concat!(
        grammar!(),
        "\n\nExit status: 0 success, 1 a problem with a file, 2 a usage error, 130 Ctrl-C, 143 SIGTERM (while writing; nothing written)."
    )
)]
struct Cli {
    /// No progress bar, and no status lines on success (errors still go to stderr).
    #[arg(short, long, global = true)]
    quiet: bool,

    /// Hugging Face token for gated or private repositories (default:
    /// HF_TOKEN, else the token `hf auth login` saved). Sent only to the
    /// Hub endpoint's origin (HF_ENDPOINT, default `https://huggingface.co`).
    #[cfg(feature = "http")]
    #[arg(long, global = true, value_name = "TOKEN")]
    token: Option<String>,

    #[command(subcommand)]
    command: Command,
}

#[derive(Subcommand, Debug)]
enum Command {
    /// List a file's tensors, metadata and SHA-256s (or a sharded checkpoint's)
    ///
    /// Prints the header, metadata and tensors (in data-offset order), with the
    /// SHA-256 of each tensor's bytes. Given a sharded checkpoint's
    /// `*.index.json`, its shards' tensors as one (checked against the index).
    /// Several files are listed one after another (exit 1 if any is rejected).
    #[command(after_help = grammar!())]
    Inspect {
        /// Safetensors files, or sharded checkpoints' `*.index.json`: paths,
        /// `http(s)://` URLs, or `hf://org/name[@revision][/file]` (the Hub).
        #[arg(required = true)]
        files: Vec<std::path::PathBuf>,
        /// Print one JSON document per file, one per line (JSON Lines):
        /// {"ok":true,...}, or {"ok":false,"error":{...}} (then exit 1).
        #[arg(long)]
        json: bool,
        /// Do not read the tensor data (no sha256); the default for URLs.
        #[arg(long)]
        no_hash: bool,
        /// Read the tensor data for the sha256s, also of URLs (streamed:
        /// the whole file is downloaded, never held in memory).
        #[arg(long, conflicts_with = "no_hash")]
        hash: bool,
    },
    /// Check that files (or sharded checkpoints) are whole and valid
    ///
    /// Validates whole files: the header, and the exact file length it implies;
    /// for an `*.index.json`, every shard and the index against them (each
    /// entry in its shard, no tensor missing or extra, total_size). Prints one
    /// `FILE: message` line on stderr per problem (exit 1).
    #[command(after_help = grammar!())]
    Verify {
        /// Safetensors files and `*.index.json` files: paths, http(s)://
        /// URLs, or `hf://org/name[@revision][/file]` (the Hub).
        #[arg(required = true)]
        files: Vec<std::path::PathBuf>,
        /// Also read every tensor's bytes and print their SHA-256 (name, then digest).
        #[arg(long)]
        hash: bool,
        /// Print one JSON document per file, one per line (JSON Lines):
        /// {"file","ok","problems":[…],…}.
        #[arg(long)]
        json: bool,
    },
    /// Compare two models' tensors (files or sharded), and with --values their values
    ///
    /// Lists tensors added, removed, changed in dtype or shape; with --values,
    /// per tensor the max abs difference, relative L2 change and
    /// changed-element count, streamed. Exit 0 whether or not they differ,
    /// unless --exit-code is given (then 1 when they differ, 2 on a problem).
    #[command(after_help = grammar!())]
    Diff(diff::Diff),
    /// Copy a model keeping, dropping, renaming or converting tensors, or editing its metadata
    ///
    /// Writes a copy of IN with tensors kept, dropped, renamed or converted,
    /// and metadata entries set or dropped, streamed (only the header is held
    /// in memory). OUT is byte for byte what the reference writer makes of
    /// the same tensors and metadata (metadata keys sorted: the reference's
    /// order is random beyond one key); with no options, IN in the canonical
    /// layout. Metadata: KEY=VALUE splits at the first `=`; setting creates
    /// the metadata if IN has none; dropping a key IN lacks changes nothing;
    /// --clear-metadata, then --drop-metadata, then --set-metadata. On any
    /// error or Ctrl-C, OUT is not created or changed.
    #[command(after_help = grammar!())]
    Edit(edit::Edit),
    /// Merge shards (of indexes, or files given) into one file
    ///
    /// Merges the shards of an index (checked against it first), or the files
    /// given, into one file, streamed. Metadata comes from the first file.
    #[command(after_help = grammar!())]
    Merge(merge::Merge),
    /// Split a model (a file or a sharded one) into Hub-style shards and their index
    ///
    /// Splits a file into Hub-style shards (model-00001-of-0000N.safetensors)
    /// and model.safetensors.index.json in DIR, streamed; each shard holds
    /// at most SIZE of tensor data, unless one tensor alone is larger.
    #[command(after_help = grammar!())]
    Split(split::Split),
}

fn main() -> ExitCode {
    let cli = Cli::parse();
    #[cfg(feature = "http")]
    remote::client::configure(cli.token.clone());
    if let Command::Edit(edit) = &cli.command {
        if let Some(message) = edit::usage_error(edit) {
            Cli::command()
                .error(clap::error::ErrorKind::ArgumentConflict, message)
                .exit();
        }
    }
    let ok = match cli.command {
        Command::Inspect {
            files,
            json,
            no_hash,
            hash,
        } => {
            let hash = (hash || no_hash).then_some(hash);
            // Every file is inspected, even after one is rejected.
            let rejected = files
                .iter()
                .filter(|file| !inspect::run(file, json, hash, cli.quiet))
                .count();
            rejected == 0
        }
        Command::Verify { files, hash, json } => verify::run(&files, hash, json, cli.quiet),
        Command::Diff(diff) => return ExitCode::from(diff::run(&diff, cli.quiet)),
        Command::Edit(edit) => writing(edit.json, cli.quiet, || edit::run(&edit, cli.quiet)),
        Command::Merge(merge) => writing(merge.json, cli.quiet, || merge::run(&merge, cli.quiet)),
        Command::Split(split) => writing(split.json, cli.quiet, || split::run(&split, cli.quiet)),
    };
    if ok {
        ExitCode::SUCCESS
    } else {
        ExitCode::from(1)
    }
}

/// Runs a command that writes files: Ctrl-C or SIGTERM stops it cleanly (no
/// temporary file left, exit 130 or 143); what it did is its status line
/// (none with `--quiet`) or with `--json` its document; an error is printed
/// on stderr, or with `--json` as `{"ok":false,"error":{…}}` (exit 1).
fn writing(
    json: bool,
    quiet: bool,
    command: impl FnOnce() -> Result<output::Written, file::Failure>,
) -> bool {
    signal::stop_on_ctrl_c();
    match command() {
        Ok(written) => {
            if json {
                output::emit_json(&written.doc);
            } else if !quiet {
                output::emit(&written.line);
            }
            true
        }
        Err(f) => {
            if json {
                output::emit_json(&output::error_json(&f));
            } else {
                eprintln!("safetensors-nano: {}", f.message);
            }
            if signal::interrupted() {
                std::process::exit(signal::stopped_status());
            }
            false
        }
    }
}
