//! `package` with the apt/dpkg provider: installed/present, latest, a version, absent, purged.

use super::command::{self, RunSpec};
use super::{param_bool, param_list, param_str, quoted, Change, ChangeResult, Context, Provider};
use crate::catalog::Resource;

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
    pub fn new(r: &Resource) -> Result<Package, String> {
        match param_str(r, "provider").as_deref() {
            None | Some("apt") | Some("dpkg") => {}
            Some(p) => {
                return Err(format!(
                    "Package[{}]: provider '{p}' is not supported by Ordo (apt, dpkg)",
                    r.title
                ))
            }
        }
        Ok(Package {
            name: param_str(r, "name").unwrap_or_else(|| r.title.clone()),
            ensure: param_str(r, "ensure").unwrap_or_else(|| "installed".into()),
            install_options: param_list(r, "install_options"),
            reinstall_on_refresh: param_bool(r, "reinstall_on_refresh", false)?,
        })
    }

    /// Installed version (dpkg's view), if the package is installed.
    fn installed(&self) -> Result<Option<String>, String> {
        let out = apt(&[
            "dpkg-query",
            "-W",
            "--showformat",
            "${Status} ${Version}\\n",
            &self.name,
        ])?;
        if out.code != 0 {
            return Ok(None);
        }
        let line = out.output.lines().next().unwrap_or("");
        Ok(line
            .strip_prefix("install ok installed ")
            .map(|v| v.trim().to_string()))
    }

    fn state(&self) -> Result<String, String> {
        if let Some(v) = self.installed()? {
            return Ok(v);
        }
        let out = apt(&[
            "dpkg-query",
            "-W",
            "--showformat",
            "${Status}\\n",
            &self.name,
        ])?;
        Ok(if out.output.contains("config-files") {
            "absent".into() // removed but not purged
        } else {
            "purged".into()
        })
    }

    fn candidate(&self) -> Result<Option<String>, String> {
        let out = apt(&["apt-cache", "policy", &self.name])?;
        Ok(out.output.lines().find_map(|l| {
            l.trim()
                .strip_prefix("Candidate: ")
                .filter(|c| *c != "(none)")
                .map(str::to_string)
        }))
    }

    fn install(&self, version: Option<&str>) -> Result<(), String> {
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

impl Provider for Package {
    fn check_apply(&mut self, _cx: &mut Context, apply: bool) -> Result<Vec<Change>, String> {
        let state = self.state()?;
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
                "installed" | "present" => self.install(None),
                "latest" => self.install(None),
                "absent" => checked(&["apt-get", "-q", "-y", "remove", &self.name]),
                "purged" => checked(&["apt-get", "-q", "-y", "purge", &self.name]),
                version => self.install(Some(version)),
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

    fn refresh(&mut self, _cx: &mut Context) -> Result<(), String> {
        if self.reinstall_on_refresh && !matches!(self.ensure.as_str(), "absent" | "purged") {
            checked(&["apt-get", "-q", "-y", "install", "--reinstall", &self.name])
        } else {
            Ok(())
        }
    }
}
