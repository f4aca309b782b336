//! Running commands: argv or `/bin/sh -c`, with a working directory, environment, user,
//! group, umask and a timeout that kills the whole process group.

use std::io::{Read, Seek, SeekFrom};
use std::os::unix::process::CommandExt;
use std::path::PathBuf;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

#[derive(Clone, Debug, Default)]
pub struct RunSpec {
    pub argv: Vec<String>,
    pub cwd: Option<PathBuf>,
    /// `KEY=VALUE` pairs added to the environment.
    pub env: Vec<(String, String)>,
    /// Directories searched for a command that is not qualified (`path` of exec).
    pub search_path: Option<String>,
    pub uid: Option<u32>,
    pub gid: Option<u32>,
    pub umask: Option<String>,
    /// Zero or none: no limit.
    pub timeout: Option<Duration>,
}

#[derive(Clone, Debug, PartialEq, Eq)]
pub struct RunOutput {
    /// Exit status; a process killed by a signal reports 128 + signal like a shell.
    pub code: i32,
    /// stdout and stderr together, as Puppet logs them.
    pub output: String,
}

/// Characters that make Ruby's `Kernel.exec(string)` hand a command to `/bin/sh` (Puppet's
/// posix exec provider relies on it).
const SHELL_META: &[char] = &[
    '*', '?', '{', '}', '[', ']', '<', '>', '(', ')', '~', '&', '|', '\\', '$', ';', '\'', '`',
    '"', '\n', '#',
];

/// Turns a command line into argv the way Puppet's posix provider ends up running it:
/// through `/bin/sh -c` when it uses shell syntax, split on whitespace otherwise.
pub fn posix_argv(command: &str) -> Vec<String> {
    let first_has_eq = command
        .split_whitespace()
        .next()
        .is_some_and(|w| w.contains('='));
    if command.contains(SHELL_META) || first_has_eq {
        shell_argv(command)
    } else {
        command.split_whitespace().map(str::to_string).collect()
    }
}

pub fn shell_argv(command: &str) -> Vec<String> {
    vec!["/bin/sh".into(), "-c".into(), command.into()]
}

/// Runs a command and waits for it (or for its timeout).
pub fn run(spec: &RunSpec) -> Result<RunOutput, String> {
    let mut argv = spec.argv.clone();
    if argv.is_empty() {
        return Err("empty command".into());
    }
    if let Some(p) = &spec.search_path {
        if !argv[0].contains('/') {
            if let Some(found) = search(&argv[0], p) {
                argv[0] = found.to_string_lossy().into_owned();
            }
        }
    }
    if let Some(mask) = &spec.umask {
        let mut wrapped = vec![
            "/bin/sh".to_string(),
            "-c".to_string(),
            format!("umask {mask} && exec \"$@\""),
            "sh".to_string(),
        ];
        wrapped.append(&mut argv);
        argv = wrapped;
    }
    // As another user: with the user's supplementary groups (Puppet's `initgroups`), which
    // std cannot set (it clears them), through util-linux's `setpriv`.
    let init_groups = spec
        .uid
        .filter(|_| rustix::process::getuid().is_root())
        .and_then(|uid| {
            let named = name_of_id("/etc/passwd", uid).is_some();
            let setpriv = ["/usr/bin/setpriv", "/bin/setpriv"]
                .into_iter()
                .find(|p| is_executable_file(std::path::Path::new(p)))?;
            let mut wrapped = vec![setpriv.to_string(), format!("--reuid={uid}")];
            if let Some(g) = spec.gid {
                wrapped.push(format!("--regid={g}"));
            }
            wrapped.push(
                if named {
                    "--init-groups"
                } else {
                    "--clear-groups"
                }
                .into(),
            );
            wrapped.push("--".into());
            Some(wrapped)
        });
    if let Some(mut wrapped) = init_groups.clone() {
        wrapped.append(&mut argv);
        argv = wrapped;
    }
    let mut cmd = Command::new(&argv[0]);
    cmd.args(&argv[1..]);
    // Puppet's execution: the variables naming the user who started the run are not passed
    // on (`HOME`, `USER`, `LOGNAME`); `environment` may set them.
    for name in ["HOME", "USER", "LOGNAME"] {
        cmd.env_remove(name);
    }
    if let Some(p) = &spec.search_path {
        cmd.env("PATH", p);
    }
    if let Some(d) = &spec.cwd {
        cmd.current_dir(d);
    }
    for (k, v) in &spec.env {
        cmd.env(k, v);
    }
    if init_groups.is_none() {
        if let Some(g) = spec.gid {
            cmd.gid(g);
        }
        if let Some(u) = spec.uid {
            cmd.uid(u);
        }
    }
    cmd.process_group(0);
    // Output goes to an unlinked temporary file, not a pipe (as Puppet does): a daemon the
    // command starts may keep the pipe open for ever, and waiting for its end would hang.
    let (mut out_file, out_path) =
        crate::apply::atomic::create_temp(&std::env::temp_dir().join("ordo-exec-output"))
            .map_err(|e| format!("Could not create a file for the command's output: {e}"))?;
    let _ = std::fs::remove_file(&out_path);
    let stdout = out_file.try_clone().map_err(|e| e.to_string())?;
    let stderr = out_file.try_clone().map_err(|e| e.to_string())?;
    cmd.stdin(Stdio::null()).stdout(stdout).stderr(stderr);
    let mut child = cmd
        .spawn()
        .map_err(|e| format!("Could not execute '{}': {e}", argv.join(" ")))?;
    drop(cmd);
    let pid = child.id();
    let start = Instant::now();
    // Where the kernel has pidfds, wait on the child's: woken once, when it exits (or every
    // 5 ms, to check the timeout and the stop signal). Else poll quickly at first, then back
    // off to 5 ms: a fixed 5 ms sleep added 2.5 ms on average to every short command (a
    // quarter of a run of 1,000 quick execs).
    let pidfd = i32::try_from(pid)
        .ok()
        .and_then(rustix::process::Pid::from_raw)
        .and_then(|p| rustix::process::pidfd_open(p, rustix::process::PidfdFlags::empty()).ok());
    let mut pause = Duration::from_micros(100);
    let status = loop {
        match child.try_wait() {
            Ok(Some(s)) => break s,
            Ok(None) => {}
            Err(e) => return Err(e.to_string()),
        }
        if let Some(t) = spec.timeout.filter(|t| !t.is_zero()) {
            if start.elapsed() >= t {
                kill_group(pid, &mut child);
                return Err("Command exceeded timeout".into());
            }
        }
        if crate::apply::signals::abort_requested() {
            kill_group(pid, &mut child);
            return Err("Command interrupted (second stop signal)".into());
        }
        match &pidfd {
            Some(fd) => wait_for_exit(fd, Duration::from_millis(5)),
            None => {
                std::thread::sleep(pause);
                pause = (pause * 2).min(Duration::from_millis(5));
            }
        }
    };
    let output = output_tail(&mut out_file, OUTPUT_TAIL)
        .map_err(|e| format!("Could not read the command's output: {e}"))?;
    use std::os::unix::process::ExitStatusExt;
    let code = status
        .code()
        .unwrap_or_else(|| 128 + status.signal().unwrap_or(0));
    Ok(RunOutput {
        code,
        output: String::from_utf8_lossy(&output).into_owned(),
    })
}

/// At most this much of a command's output is kept (its end): logs and error messages need
/// the last lines, and a command printing gigabytes must not cost gigabytes.
pub const OUTPUT_TAIL: u64 = 1024 * 1024;

/// The last `limit` bytes of the output file (from the start of a line), after a line
/// saying how much came before when some was left out.
fn output_tail(f: &mut std::fs::File, limit: u64) -> std::io::Result<Vec<u8>> {
    let len = f.seek(SeekFrom::End(0))?;
    let start = len.saturating_sub(limit);
    f.seek(SeekFrom::Start(start))?;
    let mut tail = Vec::with_capacity((len - start) as usize);
    f.take(limit).read_to_end(&mut tail)?;
    if start == 0 {
        return Ok(tail);
    }
    // Drop the partial first line.
    let cut = tail.iter().position(|&b| b == b'\n').map_or(0, |i| i + 1);
    let omitted = start + cut as u64;
    let mut out = format!("[{omitted} bytes of earlier output omitted]\n").into_bytes();
    out.extend_from_slice(&tail[cut..]);
    Ok(out)
}

/// Waits until the process of `pidfd` exits, at most `limit` (a signal may cut it short).
fn wait_for_exit(pidfd: &std::os::fd::OwnedFd, limit: Duration) {
    use rustix::event::{poll, PollFd, PollFlags, Timespec};
    let limit = Timespec::try_from(limit).ok();
    let mut fds = [PollFd::new(pidfd, PollFlags::IN)];
    let _ = poll(&mut fds, limit.as_ref());
}

/// Kills the command's whole process group (it leads its own group, so everything it started
/// and did not move elsewhere goes too), then reaps it. std has no `killpg`; `kill -- -PGID`
/// does it, from procps or else the shell's builtin; killing the leader alone is the last
/// resort.
fn kill_group(pid: u32, child: &mut std::process::Child) {
    let group = format!("-{pid}");
    let killed = Command::new("kill")
        .args(["-KILL", "--", &group])
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .status()
        .is_ok_and(|s| s.success())
        || Command::new("/bin/sh")
            .args(["-c", "kill -KILL -- \"$1\"", "sh", &group])
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .status()
            .is_ok_and(|s| s.success());
    if !killed {
        let _ = child.kill();
    }
    let _ = child.wait();
}

/// The first `DIR/name` of the search path that is an executable regular file (Puppet's
/// `which`: a file without an execute bit is passed over, as a shell does).
pub fn search(name: &str, path: &str) -> Option<PathBuf> {
    path.split(':')
        .filter(|d| !d.is_empty())
        .map(|d| PathBuf::from(d).join(name))
        .find(|p| is_executable_file(p))
}

/// A regular file (links followed) that this process may execute.
pub fn is_executable_file(p: &std::path::Path) -> bool {
    std::fs::metadata(p).is_ok_and(|m| m.is_file())
        && rustix::fs::access(p, rustix::fs::Access::EXEC_OK).is_ok()
}

/// Numeric id of a user name (or a numeric string), from /etc/passwd.
pub fn uid_of(name: &str) -> Option<u32> {
    name.parse().ok().or_else(|| lookup_id("/etc/passwd", name))
}

/// Numeric id of a group name (or a numeric string), from /etc/group.
pub fn gid_of(name: &str) -> Option<u32> {
    name.parse().ok().or_else(|| lookup_id("/etc/group", name))
}

/// A user's id and primary group (a numeric name is the id itself), from one read of
/// /etc/passwd; `None` when the name is no user.
pub fn user_ids(name: &str) -> Option<(u32, Option<u32>)> {
    let numeric = name.parse::<u32>().ok();
    let passwd = std::fs::read_to_string("/etc/passwd").unwrap_or_default();
    let entry = passwd.lines().find_map(|l| {
        let f: Vec<&str> = l.split(':').collect();
        let uid = f.get(2)?.parse::<u32>().ok()?;
        let ours = match numeric {
            Some(n) => uid == n,
            None => f.first() == Some(&name),
        };
        ours.then(|| (uid, f.get(3).and_then(|g| g.parse().ok())))
    });
    entry.or(numeric.map(|n| (n, None)))
}

fn lookup_id(db: &str, name: &str) -> Option<u32> {
    std::fs::read_to_string(db).ok()?.lines().find_map(|l| {
        let mut f = l.split(':');
        (f.next()? == name).then_some(())?;
        f.nth(1)?.parse().ok()
    })
}

/// Name of a numeric id in /etc/passwd or /etc/group.
pub fn name_of_id(db: &str, id: u32) -> Option<String> {
    std::fs::read_to_string(db).ok()?.lines().find_map(|l| {
        let f: Vec<&str> = l.split(':').collect();
        (f.len() > 2 && f[2].parse::<u32>().ok()? == id).then(|| f[0].to_string())
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn argv_like_puppet() {
        assert_eq!(posix_argv("/bin/echo a  b"), vec!["/bin/echo", "a", "b"]);
        assert_eq!(posix_argv("echo x >> /tmp/t")[0], "/bin/sh");
        assert_eq!(posix_argv("FOO=1 /bin/env")[0], "/bin/sh");
    }

    #[test]
    fn runs_and_collects_output() {
        let out = run(&RunSpec {
            argv: shell_argv("echo out; echo err >&2; exit 3"),
            ..RunSpec::default()
        })
        .unwrap();
        assert_eq!(out.code, 3);
        assert_eq!(out.output, "out\nerr\n");
    }

    #[test]
    fn only_the_tail_of_a_long_output_is_kept() {
        let dir = tempfile::tempdir().unwrap();
        let mut f = std::fs::File::create(dir.path().join("out")).unwrap();
        use std::io::Write;
        for i in 0..1000 {
            writeln!(f, "line {i:04}").unwrap();
        }
        let mut f = std::fs::File::open(dir.path().join("out")).unwrap();
        let tail = String::from_utf8(output_tail(&mut f, 25).unwrap()).unwrap();
        assert_eq!(
            tail,
            "[9980 bytes of earlier output omitted]\nline 0998\nline 0999\n"
        );
        let mut f = std::fs::File::open(dir.path().join("out")).unwrap();
        assert_eq!(output_tail(&mut f, 1 << 20).unwrap().len(), 10_000);
    }

    #[test]
    fn timeout_kills_the_group() {
        let dir = tempfile::tempdir().unwrap();
        let marker = dir.path().join("survivor");
        let start = Instant::now();
        // A grandchild in the background would write the marker after a second.
        let script = format!(
            "(sleep 1; echo alive > {}) & sleep 30; wait",
            marker.display()
        );
        let r = run(&RunSpec {
            argv: shell_argv(&script),
            timeout: Some(Duration::from_millis(200)),
            ..RunSpec::default()
        });
        assert_eq!(r, Err("Command exceeded timeout".into()));
        assert!(start.elapsed() < Duration::from_secs(10));
        std::thread::sleep(Duration::from_millis(1500));
        assert!(
            !marker.exists(),
            "a process of the group survived the timeout"
        );
    }

    #[test]
    fn a_daemon_holding_the_output_open_does_not_hang_the_run() {
        let start = Instant::now();
        // setsid moves the sleeper out of the group; it keeps stdout open for 20 s.
        let out = run(&RunSpec {
            argv: shell_argv("setsid sleep 20 & echo started"),
            ..RunSpec::default()
        })
        .unwrap();
        assert_eq!(out.output, "started\n");
        assert!(start.elapsed() < Duration::from_secs(10));
    }

    #[test]
    fn umask_cwd_env_and_search_path() {
        let dir = tempfile::tempdir().unwrap();
        let out = run(&RunSpec {
            argv: vec!["sh".into(), "-c".into(), "umask; pwd; echo $X".into()],
            cwd: Some(dir.path().to_path_buf()),
            env: vec![("X".into(), "y".into())],
            search_path: Some("/usr/bin:/bin".into()),
            umask: Some("0027".into()),
            ..RunSpec::default()
        })
        .unwrap();
        let canon = dir.path().canonicalize().unwrap();
        assert_eq!(out.output, format!("0027\n{}\ny\n", canon.display()));
    }
}
