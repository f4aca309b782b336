//! `service`: systemd when it runs the machine, else init scripts; `start`, `stop`,
//! `restart` and `status` commands override the provider's.

use super::command::{self, RunSpec};
use super::{param_str, quoted, Change, ChangeResult, Context, Provider};
use crate::catalog::Resource;

pub const ATTRIBUTES: &[&str] = &[
    "name",
    "ensure",
    "enable",
    "start",
    "stop",
    "restart",
    "status",
    "hasstatus",
    "hasrestart",
    "provider",
    "binary",
    "path",
    "pattern",
    "flags",
    "timeout",
    "manifest",
    "control",
    "logonaccount",
    "logonpassword",
];

pub struct Service {
    name: String,
    ensure: Option<bool>,
    enable: Option<bool>,
    start: Option<String>,
    stop: Option<String>,
    restart: Option<String>,
    status: Option<String>,
    systemd: bool,
}

fn parse_running(v: &str) -> Result<bool, String> {
    match v {
        "running" | "true" => Ok(true),
        "stopped" | "false" => Ok(false),
        other => Err(format!(
            "Invalid value \"{other}\". Valid values are stopped, running"
        )),
    }
}

fn sh(cmd: &str) -> Result<command::RunOutput, String> {
    command::run(&RunSpec {
        argv: command::shell_argv(cmd),
        search_path: Some("/usr/sbin:/usr/bin:/sbin:/bin".into()),
        ..RunSpec::default()
    })
}

fn checked(cmd: &str) -> Result<(), String> {
    let out = sh(cmd)?;
    if out.code == 0 {
        Ok(())
    } else {
        Err(format!(
            "Execution of '{cmd}' returned {}: {}",
            out.code,
            out.output.trim_end()
        ))
    }
}

fn quote(s: &str) -> String {
    format!("'{}'", s.replace('\'', "'\\''"))
}

impl Service {
    pub fn new(r: &Resource, kind: &super::ResourceType) -> Result<Service, String> {
        let systemd = match kind.provider_of(r) {
            Ok(p) => p == "systemd",
            Err(p) => {
                return Err(format!(
                    "Service[{}]: provider '{p}' is not supported by Ordo",
                    r.title
                ))
            }
        };
        let enable = match param_str(r, "enable").as_deref() {
            None => None,
            Some("true") => Some(true),
            Some("false") => Some(false),
            Some(other) => {
                return Err(format!(
                    "Service[{}]: unsupported enable value '{other}'",
                    r.title
                ))
            }
        };
        Ok(Service {
            name: param_str(r, "name").unwrap_or_else(|| r.title.clone()),
            ensure: param_str(r, "ensure")
                .map(|e| parse_running(&e))
                .transpose()?,
            enable,
            start: param_str(r, "start"),
            stop: param_str(r, "stop"),
            restart: param_str(r, "restart"),
            status: param_str(r, "status"),
            systemd,
        })
    }

    fn default_cmd(&self, action: &str) -> String {
        if self.systemd {
            format!("systemctl {action} -- {}", quote(&self.name))
        } else {
            format!("/etc/init.d/{} {action}", quote(&self.name))
        }
    }

    fn running(&self) -> Result<bool, String> {
        let cmd = match &self.status {
            Some(c) => c.clone(),
            None if self.systemd => format!("systemctl is-active --quiet -- {}", quote(&self.name)),
            None => self.default_cmd("status"),
        };
        Ok(sh(&cmd)?.code == 0)
    }

    fn enabled(&self) -> Result<bool, String> {
        let cmd = if self.systemd {
            format!("systemctl is-enabled --quiet -- {}", quote(&self.name))
        } else {
            format!(
                "ls /etc/rc[2345].d/S??{} >/dev/null 2>&1",
                quote(&self.name)
            )
        };
        Ok(sh(&cmd)?.code == 0)
    }

    fn set_enabled(&self, on: bool) -> Result<(), String> {
        if self.systemd {
            checked(&format!(
                "systemctl {} -- {}",
                if on { "enable" } else { "disable" },
                quote(&self.name)
            ))
        } else {
            checked(&format!(
                "update-rc.d {} {}",
                quote(&self.name),
                if on { "enable" } else { "disable" }
            ))
        }
    }
}

fn state_name(running: bool) -> &'static str {
    if running {
        "running"
    } else {
        "stopped"
    }
}

impl Provider for Service {
    fn check_apply(&mut self, _cx: &mut Context, apply: bool) -> Result<Vec<Change>, String> {
        let mut changes = Vec::new();
        if let Some(want) = self.ensure {
            let have = self.running()?;
            if have != want {
                let result = if !apply {
                    ChangeResult::Noop
                } else {
                    let cmd = if want {
                        self.start
                            .clone()
                            .unwrap_or_else(|| self.default_cmd("start"))
                    } else {
                        self.stop
                            .clone()
                            .unwrap_or_else(|| self.default_cmd("stop"))
                    };
                    match checked(&cmd) {
                        Ok(()) => ChangeResult::Synced(format!(
                            "ensure changed '{}' to '{}'",
                            state_name(have),
                            state_name(want)
                        )),
                        Err(e) => ChangeResult::Failed(e),
                    }
                };
                changes.push(Change {
                    property: "ensure".into(),
                    event: if want {
                        "service_started"
                    } else {
                        "service_stopped"
                    }
                    .into(),
                    previous: quoted(state_name(have)),
                    desired: quoted(state_name(want)),
                    result,
                });
            }
        }
        if let Some(want) = self.enable {
            let have = self.enabled()?;
            if have != want {
                let result = if !apply {
                    ChangeResult::Noop
                } else {
                    match self.set_enabled(want) {
                        Ok(()) => {
                            ChangeResult::Synced(format!("enable changed '{have}' to '{want}'"))
                        }
                        Err(e) => ChangeResult::Failed(e),
                    }
                };
                changes.push(Change {
                    property: "enable".into(),
                    event: "enable_changed".into(),
                    previous: quoted(&have.to_string()),
                    desired: quoted(&want.to_string()),
                    result,
                });
            }
        }
        Ok(changes)
    }

    fn refreshable(&self) -> bool {
        true
    }

    /// Restarts a running service (Puppet only restarts what runs, and not when stopping it).
    fn refresh(&mut self, _cx: &mut Context) -> Result<(), String> {
        if self.ensure == Some(false) || !self.running()? {
            return Ok(());
        }
        let cmd = self
            .restart
            .clone()
            .unwrap_or_else(|| self.default_cmd("restart"));
        checked(&cmd)
    }
}
