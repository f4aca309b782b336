//! `exec`: runs a command when its checks allow it (`creates`, `onlyif`, `unless`,
//! `refreshonly`), and again on refresh.

use super::command::{self, RunSpec};
use super::{
    param_bool, param_failure, param_list, param_str, Change, ChangeResult, Context, Provider,
};
use crate::apply::log::Level;
use crate::catalog::Resource;
use serde_json::Value as Json;
use std::time::Duration;

pub const ATTRIBUTES: &[&str] = &[
    "command",
    "path",
    "cwd",
    "environment",
    "user",
    "group",
    "creates",
    "onlyif",
    "unless",
    "refreshonly",
    "refresh",
    "returns",
    "timeout",
    "tries",
    "try_sleep",
    "logoutput",
    "umask",
    "provider",
    "name",
];

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum LogOutput {
    Always,
    Never,
    OnFailure,
}

pub struct Exec {
    command: String,
    /// The command given as an array: its argv.
    command_argv: Option<Vec<String>>,
    shell: bool,
    spec: RunSpec,
    /// `user` and `group`, resolved when a command runs (see [`Exec::ids`]).
    user: Option<String>,
    group: Option<String>,
    creates: Vec<String>,
    onlyif: Vec<String>,
    unless: Vec<String>,
    refreshonly: bool,
    refresh: Option<String>,
    returns: Vec<String>,
    tries: u32,
    try_sleep: Duration,
    logoutput: LogOutput,
    level: Level,
    /// `command`, `unless` or `onlyif` is sensitive: Puppet then hides the command and its
    /// output (`[command redacted]`, `[output redacted]`).
    sensitive: bool,
}

/// A number of seconds (`what` names the parameter in the error).
fn seconds(t: &str, what: &str) -> Result<f64, String> {
    t.parse::<f64>()
        .ok()
        .filter(|s| !s.is_nan())
        .ok_or_else(|| format!("{what} must be a number, not '{t}'"))
}

impl Exec {
    pub fn new(r: &Resource, kind: &super::ResourceType) -> Result<Exec, String> {
        // Puppet 7 runs a command given as an array as it is, without a shell.
        let command_argv = match r.parameters.get("command") {
            Some(Json::Array(items)) if !items.is_empty() => Some(
                items
                    .iter()
                    .map(|x| match x {
                        Json::String(s) => s.clone(),
                        other => other.to_string(),
                    })
                    .collect::<Vec<String>>(),
            ),
            _ => None,
        };
        let command = match &command_argv {
            Some(argv) => argv.join(" "),
            None => param_str(r, "command").unwrap_or_else(|| r.title.clone()),
        };
        for name in ["cwd", "creates"] {
            if param_list(r, name).iter().any(|p| !p.starts_with('/')) {
                let detail = format!("{name} must be a fully qualified path");
                return Err(param_failure(r, name, detail));
            }
        }
        if let Some(mask) = param_str(r, "umask") {
            let digits = mask
                .strip_prefix('0')
                .filter(|d| !d.is_empty())
                .unwrap_or(&mask);
            if digits.is_empty()
                || digits.len() > 4
                || !digits.bytes().all(|b| (b'0'..=b'7').contains(&b))
            {
                let detail = format!("The umask specification is invalid: \"{mask}\"");
                return Err(param_failure(r, "umask", detail));
            }
        }
        let shell = match kind.provider_of(r) {
            Ok(p) => p == "shell",
            Err(other) => {
                return Err(format!(
                    "Invalid exec provider '{other}' for Exec[{}] (Ordo supports {})",
                    r.title,
                    kind.provider_names().join(" and ")
                ))
            }
        };
        let path = {
            let p = param_list(r, "path");
            (!p.is_empty()).then(|| p.join(":"))
        };
        // The posix provider's `validatecmd`: without a path, the executable of `refresh`,
        // `unless`, `onlyif` (as each parameter is set, in this order) and of the command
        // (when the whole resource is validated) must be absolute.
        if !shell && path.is_none() {
            let unqualified = |cmd: &str| {
                let exe = extract_exe(cmd);
                (!exe.starts_with('/')).then(|| format!("'{exe}' is not qualified and no path was specified. Please qualify the command or specify a path."))
            };
            for name in ["refresh", "unless", "onlyif"] {
                for cmd in param_list(r, name) {
                    if let Some(detail) = unqualified(&cmd) {
                        return Err(param_failure(r, name, detail));
                    }
                }
            }
            let exe_word = match &command_argv {
                Some(argv) => argv[0].clone(),
                None => extract_exe(&command).to_string(),
            };
            if !exe_word.starts_with('/') {
                return Err(format!(
                    "Validation of Exec[{}] failed: '{exe_word}' is not qualified and no path was specified. Please qualify the command or specify a path.",
                    r.title
                ));
            }
        }
        let mut env = Vec::new();
        for pair in param_list(r, "environment") {
            match pair.split_once('=') {
                Some((k, v)) => env.push((k.to_string(), v.to_string())),
                None => return Err(format!("Invalid environment setting '{pair}'")),
            }
        }
        // Only asked when `user` or `group` is set: it reads /etc/passwd (and, once per
        // process, /proc/self/status), which was most of `ordo check`'s time on a catalog
        // of many execs.
        let running_as_root = || command::uid_of("root").is_some() && is_root();
        // The names are looked up when a command runs, as Puppet does: the user may be one
        // that this run creates before the exec.
        let user = param_str(r, "user");
        if user.is_some() && !running_as_root() {
            return Err("Only root can execute commands as other users".into());
        }
        let group = param_str(r, "group");
        if group.is_some() && !running_as_root() {
            return Err("Only root can execute commands as other groups".into());
        }
        // Puppet's munge: a negative timeout is 0, and 0 is no timeout.
        let timeout = match param_str(r, "timeout") {
            Some(t) => Duration::try_from_secs_f64(seconds(&t, "The timeout")?.max(0.0))
                .ok()
                .filter(|d| !d.is_zero()),
            None => Some(Duration::from_secs(300)),
        };
        let tries = match param_str(r, "tries") {
            Some(t) => t
                .parse::<u32>()
                .ok()
                .filter(|t| *t >= 1)
                .ok_or_else(|| format!("Tries must be an integer >= 1, not '{t}'"))?,
            None => 1,
        };
        let try_sleep = match param_str(r, "try_sleep") {
            Some(t) => {
                let secs = seconds(&t, "try_sleep")?;
                if secs < 0.0 {
                    let detail = format!("Munging failed for value {t} in class try_sleep: try_sleep cannot be a negative number");
                    return Err(param_failure(r, "try_sleep", detail));
                }
                Duration::try_from_secs_f64(secs)
                    .map_err(|_| format!("try_sleep must be a number, not '{t}'"))?
            }
            None => Duration::ZERO,
        };
        let logoutput = match param_str(r, "logoutput").as_deref() {
            None | Some("on_failure") => LogOutput::OnFailure,
            Some("true") => LogOutput::Always,
            Some("false") => LogOutput::Never,
            Some(other) => return Err(format!("Invalid value '{other}' for logoutput")),
        };
        let returns = {
            let r = param_list(r, "returns");
            if r.is_empty() {
                vec!["0".to_string()]
            } else {
                r
            }
        };
        Ok(Exec {
            command,
            command_argv,
            shell,
            spec: RunSpec {
                argv: Vec::new(),
                cwd: param_str(r, "cwd").map(Into::into),
                env,
                search_path: path,
                uid: None,
                gid: None,
                umask: param_str(r, "umask"),
                timeout,
            },
            user,
            group,
            creates: param_list(r, "creates"),
            onlyif: param_list(r, "onlyif"),
            unless: param_list(r, "unless"),
            refreshonly: param_bool(r, "refreshonly", false)?,
            refresh: param_str(r, "refresh"),
            returns,
            tries,
            try_sleep,
            logoutput,
            level: super::notify::level_of(r),
            sensitive: ["command", "unless", "onlyif"]
                .iter()
                .any(|p| r.sensitive_parameters.iter().any(|s| s == p)),
        })
    }

    fn spec_for(&self, command: &str) -> RunSpec {
        RunSpec {
            argv: if let Some(argv) = self
                .command_argv
                .as_ref()
                .filter(|_| command == self.command)
            {
                argv.clone()
            } else if self.shell {
                command::shell_argv(command)
            } else {
                command::posix_argv(command)
            },
            ..self.spec.clone()
        }
    }

    /// Whether the checks let the command run (`check_all_attributes` in exec.rb).
    fn checks_pass(&self, refreshing: bool) -> Result<bool, String> {
        if self.refreshonly && !refreshing {
            return Ok(false);
        }
        let base = self.spec.cwd.clone();
        for c in &self.creates {
            let p = std::path::Path::new(c);
            let p = match (&base, p.is_relative()) {
                (Some(b), true) => b.join(p),
                _ => p.to_path_buf(),
            };
            if p.exists() {
                return Ok(false);
            }
        }
        for c in &self.unless {
            if self.exec(c)?.code == 0 {
                return Ok(false);
            }
        }
        for c in &self.onlyif {
            if self.exec(c)?.code != 0 {
                return Ok(false);
            }
        }
        Ok(true)
    }

    /// Runs the command (with its tries); logs output as asked; fails on an unexpected status.
    fn run_command(&self, cx: &mut Context) -> Result<(), String> {
        let mut out = None;
        for attempt in 0..self.tries {
            let o = self.exec(&self.command)?;
            let ok = self.returns.contains(&o.code.to_string());
            out = Some(o);
            if ok {
                break;
            }
            if attempt + 1 < self.tries && !self.try_sleep.is_zero() {
                std::thread::sleep(self.try_sleep);
            }
        }
        let out = out.expect("tries >= 1");
        let ok = self.returns.contains(&out.code.to_string());
        let log = match self.logoutput {
            LogOutput::Always => true,
            LogOutput::OnFailure => !ok,
            LogOutput::Never => false,
        };
        if log && self.sensitive {
            cx.log(
                self.level,
                Some(format!("{}/returns", cx.path)),
                "[output redacted]",
            );
        } else if log {
            for line in out.output.lines() {
                cx.log(self.level, Some(format!("{}/returns", cx.path)), line);
            }
        }
        if ok {
            Ok(())
        } else if self.sensitive {
            Err(format!(
                "[command redacted] returned {} instead of one of [{}]",
                out.code,
                self.returns.join(",")
            ))
        } else {
            Err(format!(
                "'{}' returned {} instead of one of [{}]",
                self.command,
                out.code,
                self.returns.join(",")
            ))
        }
    }

    /// The user and group ids a command runs as, as Puppet's `change_privileges` finds them:
    /// a `user` alone runs with its primary group; a `group` is looked up first. A name
    /// that does not resolve is Puppet's message (`Invalid user: x`).
    fn ids(&self) -> Result<(Option<u32>, Option<u32>), String> {
        let user = |u: &str| command::user_ids(u).ok_or_else(|| format!("Invalid user: {u}"));
        match (&self.user, &self.group) {
            (None, None) => Ok((None, None)),
            (Some(u), None) => {
                let (uid, primary) = user(u)?;
                Ok((Some(uid), primary))
            }
            (u, Some(g)) => {
                let gid = command::gid_of(g).ok_or_else(|| format!("Invalid group: {g}"))?;
                let uid = u.as_deref().map(user).transpose()?.map(|(uid, _)| uid);
                Ok((uid, Some(gid)))
            }
        }
    }

    /// Runs one command; errors do not show a sensitive command. A user or group that does
    /// not exist fails the command as it fails Puppet's child process: status 1 and the
    /// error as its output.
    fn exec(&self, cmd: &str) -> Result<command::RunOutput, String> {
        let (uid, gid) = match self.ids() {
            Ok(ids) => ids,
            Err(e) => {
                return Ok(command::RunOutput {
                    code: 1,
                    output: format!("Error: Could not execute posix command: {e}\n"),
                })
            }
        };
        if !self.shell {
            let exe = match self.command_argv.as_ref().filter(|_| cmd == self.command) {
                Some(argv) => argv[0].as_str(),
                None => extract_exe(cmd),
            };
            check_exe(exe, self.spec.search_path.as_deref())?;
        }
        let spec = RunSpec {
            uid,
            gid,
            ..self.spec_for(cmd)
        };
        let out = command::run(&spec).map_err(|e| {
            if self.sensitive && e.starts_with("Could not execute") {
                "Could not execute [command redacted]".to_string()
            } else {
                e
            }
        })?;
        // Puppet's provider takes status 127 as a missing command and raises with the
        // output as the message, whatever `returns` allows (and without further tries).
        if out.code == 127 {
            return Err(if self.sensitive {
                "[output redacted]".to_string()
            } else {
                out.output.trim_end_matches('\n').to_string()
            });
        }
        Ok(out)
    }

    fn desired(&self) -> String {
        super::show(&serde_json::Value::from(self.returns.clone()))
    }
}

/// The executable of a command line, as Puppet's exec provider reads it (`extractexe`): a
/// double- or single-quoted leading word without its quotes, else the text before the
/// first space.
fn extract_exe(cmd: &str) -> &str {
    for q in ['"', '\''] {
        if let Some(rest) = cmd.strip_prefix(q) {
            if let Some(end) = rest.find(q).filter(|&e| e > 0) {
                return &rest[..end];
            }
        }
    }
    cmd.split(' ').next().unwrap_or("")
}

/// The posix provider's `checkexe`, made before every command it runs: an absolute
/// executable must be an executable file; any other is looked up in `path` (Puppet's
/// `which`: an executable regular file).
fn check_exe(exe: &str, path: Option<&str>) -> Result<(), String> {
    use std::os::unix::fs::PermissionsExt;
    let executable_file = |p: &std::path::Path| {
        std::fs::metadata(p).is_ok_and(|m| m.is_file() && m.permissions().mode() & 0o111 != 0)
    };
    let not_found = || format!("Could not find command '{exe}'");
    // `File.expand_path(exe) == exe`: absolute and already normal.
    let normal = exe.starts_with('/')
        && (exe == "/"
            || (!exe.ends_with('/')
                && exe[1..]
                    .split('/')
                    .all(|c| !c.is_empty() && c != "." && c != "..")));
    if normal {
        let p = std::path::Path::new(exe);
        let meta = std::fs::metadata(p).map_err(|_| not_found())?;
        if !meta.is_file() {
            // Ruby's `File.ftype` names.
            let kind = crate::input::ftype(&meta.file_type());
            return Err(format!("'{exe}' is a {kind}, not a file"));
        }
        if rustix::fs::access(p, rustix::fs::Access::EXEC_OK).is_err() {
            return Err(format!("'{exe}' is not executable"));
        }
        return Ok(());
    }
    if let Some(path) = path {
        if exe.starts_with('/') {
            if executable_file(std::path::Path::new(exe)) {
                return Ok(());
            }
        } else if !exe.is_empty()
            && path
                .split(':')
                .any(|dir| executable_file(&std::path::Path::new(dir).join(exe)))
        {
            return Ok(());
        }
    }
    Err(not_found())
}

/// Is the effective user root? (It does not change during a run: asked once.)
fn is_root() -> bool {
    static ROOT: std::sync::OnceLock<bool> = std::sync::OnceLock::new();
    *ROOT.get_or_init(|| {
        std::fs::read_to_string("/proc/self/status")
            .ok()
            .and_then(|s| {
                s.lines()
                    .find(|l| l.starts_with("Uid:"))
                    .and_then(|l| l.split_whitespace().nth(2).map(|e| e == "0"))
            })
            .unwrap_or(false)
    })
}

impl Provider for Exec {
    fn check_apply(&mut self, cx: &mut Context, apply: bool) -> Result<Vec<Change>, String> {
        if !self.checks_pass(false)? {
            return Ok(Vec::new());
        }
        let result = if !apply {
            ChangeResult::Noop
        } else {
            match self.run_command(cx) {
                Ok(()) => ChangeResult::Synced("executed successfully".into()),
                Err(e) => ChangeResult::Failed(e),
            }
        };
        Ok(vec![Change {
            property: "returns".into(),
            event: "executed_command".into(),
            previous: "'notrun'".into(),
            desired: self.desired(),
            result,
        }])
    }

    fn refreshable(&self) -> bool {
        true
    }

    fn refresh(&mut self, cx: &mut Context) -> Result<(), String> {
        if !self.checks_pass(true)? {
            return Ok(());
        }
        match &self.refresh {
            Some(cmd) => self.exec(cmd).map(|_| ()),
            None => self.run_command(cx),
        }
    }
}
