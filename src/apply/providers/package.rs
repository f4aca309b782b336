//! `package` with the apt and dpkg providers: installed/present, latest, a version, absent,
//! purged.
//!
//! `apt` installs with apt-get (a `source` is not used); `dpkg`, as Puppet's, installs the
//! `.deb` named by `source` (`dpkg -i`), removes with `dpkg -r` and purges with
//! `dpkg --purge`. Under `--sysroot DIR` (`Context::sysroot`) dpkg and dpkg-query get
//! `--root=DIR`; apt-get is refused there (it would change this system).

use super::command::{self, RunSpec};
use super::{param_bool, param_list, param_str, quoted, Change, ChangeResult, Context, Provider};
use crate::catalog::Resource;
use std::path::Path;

pub const ATTRIBUTES: &[&str] = &[
    "name",
    "ensure",
    "provider",
    "install_options",
    "uninstall_options",
    "source",
    "responsefile",
    "adminfile",
    "reinstall_on_refresh",
    "allow_virtual",
    "configfiles",
    "mark",
    "package_settings",
    "category",
    "description",
    "platform",
    "root",
    "status",
    "vendor",
    "flavor",
    "instance",
    "install_only",
    "enable_only",
    "command",
    "allowcdrom",
];

pub struct Package {
    name: String,
    ensure: String,
    install_options: Vec<String>,
    reinstall_on_refresh: bool,
    /// `provider => dpkg`: install `source` with dpkg rather than apt-get.
    dpkg: bool,
    source: Option<String>,
}

/// `--root=DIR` for dpkg and dpkg-query under a sysroot.
fn root_arg(root: Option<&Path>) -> Option<String> {
    root.map(|r| format!("--root={}", r.display()))
}

/// Runs a command with the environment apt needs to stay quiet and non-interactive.
fn apt(args: &[&str]) -> Result<command::RunOutput, String> {
    command::run(&RunSpec {
        argv: args.iter().map(|s| s.to_string()).collect(),
        env: vec![("DEBIAN_FRONTEND".into(), "noninteractive".into())],
        search_path: Some("/usr/sbin:/usr/bin:/sbin:/bin".into()),
        ..RunSpec::default()
    })
}

fn checked(args: &[&str]) -> Result<(), String> {
    let out = apt(args)?;
    if out.code == 0 {
        Ok(())
    } else {
        Err(format!(
            "Execution of '{}' returned {}: {}",
            args.join(" "),
            out.code,
            out.output.trim_end()
        ))
    }
}

impl Package {
    pub fn new(r: &Resource, kind: &super::ResourceType) -> Result<Package, String> {
        let dpkg = match kind.provider_of(r) {
            Ok(p) => p == "dpkg",
            Err(p) => {
                return Err(format!(
                    "Package[{}]: provider '{p}' is not supported by Ordo ({})",
                    r.title,
                    kind.provider_names().join(", ")
                ))
            }
        };
        Ok(Package {
            name: param_str(r, "name").unwrap_or_else(|| r.title.clone()),
            ensure: param_str(r, "ensure").unwrap_or_else(|| "installed".into()),
            install_options: param_list(r, "install_options"),
            reinstall_on_refresh: param_bool(r, "reinstall_on_refresh", false)?,
            dpkg,
            source: param_str(r, "source"),
        })
    }

    /// `dpkg-query -W --showformat FORMAT NAME` (with `--root=DIR` under a sysroot).
    fn query(&self, root: Option<&Path>, format: &str) -> Result<command::RunOutput, String> {
        let root = root_arg(root);
        let mut args = vec!["dpkg-query"];
        args.extend(root.as_deref());
        args.extend(["-W", "--showformat", format, &self.name]);
        apt(&args)
    }

    /// Installed version (dpkg's view), if the package is installed.
    fn installed(&self, root: Option<&Path>) -> Result<Option<String>, String> {
        let out = self.query(root, "${Status} ${Version}\\n")?;
        if out.code != 0 {
            return Ok(None);
        }
        let line = out.output.lines().next().unwrap_or("");
        Ok(line
            .strip_prefix("install ok installed ")
            .map(|v| v.trim().to_string()))
    }

    fn state(&self, root: Option<&Path>) -> Result<String, String> {
        if let Some(v) = self.installed(root)? {
            return Ok(v);
        }
        let out = self.query(root, "${Status}\\n")?;
        Ok(if out.output.contains("config-files") {
            "absent".into() // removed but not purged
        } else {
            "purged".into()
        })
    }

    /// The version `latest` means: apt's candidate, or the version of the dpkg `source`.
    fn candidate(&self) -> Result<Option<String>, String> {
        if self.dpkg {
            let Some(src) = &self.source else {
                return Ok(None);
            };
            let out = apt(&["dpkg-deb", "--show", "--showformat", "${Version}", src])?;
            return Ok((out.code == 0).then(|| out.output.trim().to_string()));
        }
        let out = apt(&["apt-cache", "policy", &self.name])?;
        Ok(out.output.lines().find_map(|l| {
            l.trim()
                .strip_prefix("Candidate: ")
                .filter(|c| *c != "(none)")
                .map(str::to_string)
        }))
    }

    fn install(&self, root: Option<&Path>, version: Option<&str>) -> Result<(), String> {
        if self.dpkg {
            // Puppet's dpkg provider: the .deb in `source`, old configuration files kept.
            let Some(src) = &self.source else {
                return Err("You cannot install dpkg packages without a source".into());
            };
            let root = root_arg(root);
            let mut args = vec!["dpkg"];
            args.extend(root.as_deref());
            args.extend(["--force-confold"]);
            args.extend(self.install_options.iter().map(String::as_str));
            args.extend(["-i", src.as_str()]);
            return checked(&args);
        }
        if root.is_some() {
            return Err(format!(
                "apt-get cannot install {} under --sysroot; use provider => dpkg with a source",
                self.name
            ));
        }
        let spec = match version {
            Some(v) => format!("{}={v}", self.name),
            None => self.name.clone(),
        };
        let mut args = vec![
            "apt-get",
            "-q",
            "-y",
            "-o",
            "DPkg::Options::=--force-confold",
        ];
        args.extend(self.install_options.iter().map(String::as_str));
        args.extend(["install", spec.as_str()]);
        checked(&args)
    }
}

impl Package {
    /// Removes (or purges) the package: dpkg when it is the provider or under a sysroot,
    /// else apt-get.
    fn uninstall(&self, root: Option<&Path>, purge: bool) -> Result<(), String> {
        if self.dpkg || root.is_some() {
            let root = root_arg(root);
            let mut args = vec!["dpkg"];
            args.extend(root.as_deref());
            args.extend([if purge { "--purge" } else { "-r" }, self.name.as_str()]);
            return checked(&args);
        }
        checked(&[
            "apt-get",
            "-q",
            "-y",
            if purge { "purge" } else { "remove" },
            &self.name,
        ])
    }
}

impl Provider for Package {
    fn check_apply(&mut self, cx: &mut Context, apply: bool) -> Result<Vec<Change>, String> {
        let root = cx.sysroot;
        let state = self.state(root)?;
        let installed = !matches!(state.as_str(), "absent" | "purged");
        let want = self.ensure.as_str();
        let (in_sync, desired) = match want {
            "installed" | "present" => (installed, want.to_string()),
            "absent" => (!installed, want.to_string()),
            "purged" => (state == "purged", want.to_string()),
            "latest" => match self.candidate()? {
                Some(c) => (installed && state == c, c),
                None => (installed, want.to_string()),
            },
            version => (state == version, version.to_string()),
        };
        if in_sync {
            return Ok(Vec::new());
        }
        let result = if !apply {
            ChangeResult::Noop
        } else {
            let done = match want {
                "installed" | "present" | "latest" => self.install(root, None),
                "absent" | "purged" => self.uninstall(root, want == "purged"),
                version => self.install(root, Some(version)),
            };
            match done {
                Ok(()) if !installed => ChangeResult::Synced("created".into()),
                Ok(()) if matches!(want, "absent" | "purged") => {
                    ChangeResult::Synced("removed".into())
                }
                Ok(()) => ChangeResult::Synced(format!("ensure changed '{state}' to '{desired}'")),
                Err(e) => ChangeResult::Failed(e),
            }
        };
        Ok(vec![Change {
            property: "ensure".into(),
            event: "package_changed".into(),
            previous: quoted(&state),
            desired: quoted(&desired),
            result,
        }])
    }

    fn refreshable(&self) -> bool {
        true
    }

    fn refresh(&mut self, cx: &mut Context) -> Result<(), String> {
        if self.reinstall_on_refresh && !matches!(self.ensure.as_str(), "absent" | "purged") {
            if self.dpkg || cx.sysroot.is_some() {
                return self.install(cx.sysroot, None);
            }
            checked(&["apt-get", "-q", "-y", "install", "--reinstall", &self.name])
        } else {
            Ok(())
        }
    }
}
