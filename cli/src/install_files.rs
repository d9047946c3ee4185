//! The files a package installs next to the binary, generated from the
//! argument parser itself so they never drift from it: `gpukb completions
//! SHELL` (clap_complete) and `gpukb man` (a roff man page, clap_mangen).

use anyhow::Context;
use std::io::Write;
use std::process::ExitCode;

/// The shells `gpukb completions` writes a script for.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum Shell {
    Bash,
    Zsh,
    Fish,
    Elvish,
    Powershell,
}

#[derive(Debug, clap::Args)]
#[command(
    after_help = "Install, for example:\n  gpukb completions bash > ~/.local/share/bash-completion/completions/gpukb\n  gpukb completions zsh > \"${fpath[1]}/_gpukb\"\n  gpukb completions fish > ~/.config/fish/completions/gpukb.fish"
)]
pub struct CompletionsArgs {
    /// The shell to write the completion script for.
    #[arg(value_enum)]
    pub shell: Shell,
}

#[derive(Debug, clap::Args)]
#[command(after_help = "Read it with: gpukb man | man -l -")]
pub struct ManArgs {}

/// Writes the completion script for `args.shell` on `out`.
pub fn completions(args: &CompletionsArgs, out: &mut dyn Write) -> anyhow::Result<ExitCode> {
    use clap_complete::Shell as S;
    let shell = match args.shell {
        Shell::Bash => S::Bash,
        Shell::Zsh => S::Zsh,
        Shell::Fish => S::Fish,
        Shell::Elvish => S::Elvish,
        Shell::Powershell => S::PowerShell,
    };
    let mut cmd = crate::command();
    // Generated into memory first: clap_complete panics on a failed write (a
    // full disk); gpukb reports it in one line and exits 2.
    let mut buf = Vec::new();
    clap_complete::generate(shell, &mut cmd, "gpukb", &mut buf);
    out.write_all(&buf).context("writing the completions")?;
    out.flush().context("writing the completions")?;
    Ok(ExitCode::SUCCESS)
}

/// Writes the man page gpukb(1), with every subcommand in it, as roff on `out`.
pub fn man(_: &ManArgs, out: &mut dyn Write) -> anyhow::Result<ExitCode> {
    let cmd = crate::command();
    let man = clap_mangen::Man::new(cmd.clone());
    let mut page = Vec::new();
    man.render_title(&mut page)?;
    man.render_name_section(&mut page)?;
    man.render_synopsis_section(&mut page)?;
    man.render_description_section(&mut page)?;
    man.render_options_section(&mut page)?;
    // One section per subcommand (clap_mangen lists only their names).
    let mut roff = clap_mangen::roff::Roff::new();
    roff.control("SH", ["COMMANDS"]);
    for sub in cmd.get_subcommands().filter(|s| !s.is_hide_set()) {
        roff.control("TP", []);
        roff.text([clap_mangen::roff::bold(format!("gpukb {}", sub.get_name()))]);
        if let Some(about) = sub.get_about() {
            roff.text([clap_mangen::roff::roman(about.to_string())]);
        }
        let args: Vec<String> = sub
            .get_arguments()
            .filter(|a| !a.is_hide_set() && a.get_id() != "help")
            .filter_map(|a| {
                a.get_long()
                    .map(|l| format!("--{l}"))
                    .or_else(|| a.get_value_names().map(|v| format!("<{}>", v[0])))
                    .or_else(|| a.is_positional().then(|| format!("<{}>", a.get_id())))
            })
            .collect();
        if !args.is_empty() {
            roff.control("br", []);
            roff.text([clap_mangen::roff::italic(args.join(" "))]);
        }
    }
    roff.to_writer(&mut page)?;
    man.render_extra_section(&mut page)?;
    man.render_version_section(&mut page)?;
    out.write_all(&page)?;
    Ok(ExitCode::SUCCESS)
}
