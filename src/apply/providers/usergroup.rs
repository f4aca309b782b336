//! `user` and `group` with the useradd/groupadd family of commands.
//!
//! Under `--sysroot DIR` (`Context::sysroot`) they manage the system installed in DIR: the
//! databases read are `DIR/etc/passwd` and `DIR/etc/group`, and every command gets
//! `--root DIR`.

use super::command::{self, RunSpec};
use super::{param_bool, param_list, param_str, quoted, Change, ChangeResult, Context, Provider};
use crate::catalog::Resource;
use std::path::{Path, PathBuf};

pub const USER_ATTRIBUTES: &[&str] = &[
    "name",
    "ensure",
    "uid",
    "gid",
    "groups",
    "home",
    "shell",
    "comment",
    "managehome",
    "system",
    "membership",
    "password",
    "purge_ssh_keys",
    "provider",
    "allowdupe",
    "expiry",
    "forcelocal",
    "password_max_age",
    "password_min_age",
    "password_warn_days",
];
pub const GROUP_ATTRIBUTES: &[&str] = &[
    "name",
    "ensure",
    "gid",
    "system",
    "members",
    "provider",
    "allowdupe",
    "forcelocal",
    "auth_membership",
];

/// A database of the managed system (`etc/passwd`): under the sysroot, or this system's.
fn db(root: Option<&Path>, rel: &str) -> PathBuf {
    root.unwrap_or(Path::new("/")).join(rel)
}

/// Runs a useradd-family command (with `--root DIR` under a sysroot); fails on a non-zero exit.
fn run_checked(root: Option<&Path>, mut argv: Vec<String>) -> Result<(), String> {
    if let Some(r) = root {
        argv.splice(1..1, ["--root".to_string(), r.display().to_string()]);
    }
    let shown = argv.join(" ");
    let out = command::run(&RunSpec {
        argv,
        search_path: Some("/usr/sbin:/usr/bin:/sbin:/bin".into()),
        ..RunSpec::default()
    })?;
    if out.code == 0 {
        Ok(())
    } else {
        Err(format!(
            "Could not run '{shown}': returned {}: {}",
            out.code,
            out.output.trim_end()
        ))
    }
}

/// The fields of a name in a colon-separated database (/etc/passwd, /etc/group).
fn entry(db: &Path, name: &str) -> Option<Vec<String>> {
    std::fs::read_to_string(db).ok()?.lines().find_map(|l| {
        let f: Vec<String> = l.split(':').map(str::to_string).collect();
        (f.first().map(String::as_str) == Some(name)).then_some(f)
    })
}

fn ensure_of(r: &Resource) -> Result<Option<bool>, String> {
    match param_str(r, "ensure").as_deref() {
        None => Ok(None),
        Some("present") => Ok(Some(true)),
        Some("absent") => Ok(Some(false)),
        Some(o) => Err(format!(
            "{}[{}]: Invalid value \"{o}\". Valid values are present, absent",
            r.type_name, r.title
        )),
    }
}

/// One property: compare, and (when applying) run the command that fixes it.
fn property(
    changes: &mut Vec<Change>,
    apply: bool,
    name: &str,
    have: String,
    want: String,
    fix: impl FnOnce() -> Result<(), String>,
) {
    if have == want {
        return;
    }
    let result = if !apply {
        ChangeResult::Noop
    } else {
        match fix() {
            Ok(()) => ChangeResult::Synced(format!("{name} changed '{have}' to '{want}'")),
            Err(e) => ChangeResult::Failed(e),
        }
    };
    changes.push(Change {
        property: name.into(),
        event: format!("{name}_changed"),
        previous: quoted(&have),
        desired: quoted(&want),
        result,
    });
}

fn ensure_change(
    apply: bool,
    exists: bool,
    want: bool,
    fix: impl FnOnce() -> Result<(), String>,
) -> Change {
    let (have_s, want_s) = (
        if exists { "present" } else { "absent" },
        if want { "present" } else { "absent" },
    );
    let result = if !apply {
        ChangeResult::Noop
    } else {
        match fix() {
            Ok(()) => ChangeResult::Synced(if want { "created" } else { "removed" }.into()),
            Err(e) => ChangeResult::Failed(e),
        }
    };
    Change {
        property: "ensure".into(),
        event: if want { "created" } else { "removed" }.into(),
        previous: quoted(have_s),
        desired: quoted(want_s),
        result,
    }
}

pub struct User {
    name: String,
    ensure: Option<bool>,
    uid: Option<String>,
    gid: Option<String>,
    groups: Vec<String>,
    home: Option<String>,
    shell: Option<String>,
    comment: Option<String>,
    managehome: bool,
    system: bool,
    /// `membership => inclusive`: exactly these groups; `minimum` (the default): at least.
    inclusive_groups: bool,
}

impl User {
    pub fn new(r: &Resource) -> Result<User, String> {
        Ok(User {
            name: param_str(r, "name").unwrap_or_else(|| r.title.clone()),
            ensure: ensure_of(r)?,
            uid: param_str(r, "uid"),
            gid: param_str(r, "gid"),
            groups: param_list(r, "groups"),
            home: param_str(r, "home"),
            shell: param_str(r, "shell"),
            comment: param_str(r, "comment"),
            managehome: param_bool(r, "managehome", false)?,
            system: param_bool(r, "system", false)?,
            inclusive_groups: match param_str(r, "membership").as_deref() {
                None | Some("minimum") => false,
                Some("inclusive") => true,
                Some(o) => {
                    return Err(format!(
                        "Parameter membership failed on User[{}]: Invalid value \"{o}\". Valid values are inclusive, minimum",
                        r.title
                    ))
                }
            },
        })
    }

    fn add_args(&self) -> Vec<String> {
        let mut a = vec!["useradd".to_string()];
        for (flag, v) in [
            ("-u", &self.uid),
            ("-g", &self.gid),
            ("-d", &self.home),
            ("-s", &self.shell),
            ("-c", &self.comment),
        ] {
            if let Some(v) = v {
                a.push(flag.into());
                a.push(v.clone());
            }
        }
        if !self.groups.is_empty() {
            a.push("-G".into());
            a.push(self.groups.join(","));
        }
        if self.managehome {
            a.push("-m".into());
        }
        if self.system {
            a.push("-r".into());
        }
        a.push(self.name.clone());
        a
    }

    fn current_groups(&self, root: Option<&Path>) -> Vec<String> {
        let Ok(text) = std::fs::read_to_string(db(root, "etc/group")) else {
            return Vec::new();
        };
        text.lines()
            .filter_map(|l| {
                let f: Vec<&str> = l.split(':').collect();
                (f.len() > 3 && f[3].split(',').any(|m| m == self.name)).then(|| f[0].to_string())
            })
            .collect()
    }
}

impl Provider for User {
    fn check_apply(&mut self, cx: &mut Context, apply: bool) -> Result<Vec<Change>, String> {
        let root = cx.sysroot;
        let current = entry(&db(root, "etc/passwd"), &self.name);
        let exists = current.is_some();
        if let Some(want) = self.ensure {
            if want != exists {
                let name = self.name.clone();
                let args = self.add_args();
                let managehome = self.managehome;
                return Ok(vec![ensure_change(apply, exists, want, || {
                    if want {
                        run_checked(root, args)
                    } else {
                        let mut a = vec!["userdel".to_string()];
                        if managehome {
                            a.push("-r".into());
                        }
                        a.push(name);
                        run_checked(root, a)
                    }
                })]);
            }
        }
        let Some(f) = current else {
            return Ok(Vec::new());
        };
        if self.ensure == Some(false) {
            return Ok(Vec::new());
        }
        let mut changes = Vec::new();
        let field = |i: usize| f.get(i).cloned().unwrap_or_default();
        let name = self.name.clone();
        let usermod = |flag: &str, v: &str| {
            run_checked(
                root,
                vec!["usermod".into(), flag.into(), v.into(), name.clone()],
            )
        };
        if let Some(u) = &self.uid {
            property(&mut changes, apply, "uid", field(2), u.clone(), || {
                usermod("-u", u)
            });
        }
        if let Some(g) = &self.gid {
            // A group name means its number in the managed system's group database.
            let want = match g.parse::<u32>() {
                Ok(n) => n.to_string(),
                Err(_) => entry(&db(root, "etc/group"), g)
                    .and_then(|f| f.get(2).cloned())
                    .unwrap_or_else(|| g.clone()),
            };
            property(&mut changes, apply, "gid", field(3), want, || {
                usermod("-g", g)
            });
        }
        if let Some(c) = &self.comment {
            property(&mut changes, apply, "comment", field(4), c.clone(), || {
                usermod("-c", c)
            });
        }
        if let Some(h) = &self.home {
            property(&mut changes, apply, "home", field(5), h.clone(), || {
                usermod("-d", h)
            });
        }
        if let Some(s) = &self.shell {
            property(&mut changes, apply, "shell", field(6), s.clone(), || {
                usermod("-s", s)
            });
        }
        if !self.groups.is_empty() {
            // Puppet's list property: sorted, and with `membership => minimum` the groups the
            // user is in already stay (so only a missing group is a change).
            let mut have = self.current_groups(root);
            have.sort();
            let mut want = self.groups.clone();
            if !self.inclusive_groups {
                want.extend(have.iter().cloned());
            }
            want.sort();
            want.dedup();
            let joined = want.join(",");
            property(
                &mut changes,
                apply,
                "groups",
                have.join(","),
                joined.clone(),
                || usermod("-G", &joined),
            );
        }
        Ok(changes)
    }
}

pub struct Group {
    name: String,
    ensure: Option<bool>,
    gid: Option<String>,
    system: bool,
}

impl Group {
    pub fn new(r: &Resource) -> Result<Group, String> {
        Ok(Group {
            name: param_str(r, "name").unwrap_or_else(|| r.title.clone()),
            ensure: ensure_of(r)?,
            gid: param_str(r, "gid"),
            system: param_bool(r, "system", false)?,
        })
    }
}

impl Provider for Group {
    fn check_apply(&mut self, cx: &mut Context, apply: bool) -> Result<Vec<Change>, String> {
        let root = cx.sysroot;
        let current = entry(&db(root, "etc/group"), &self.name);
        let exists = current.is_some();
        if let Some(want) = self.ensure {
            if want != exists {
                let mut args = vec!["groupadd".to_string()];
                if let Some(g) = &self.gid {
                    args.push("-g".into());
                    args.push(g.clone());
                }
                if self.system {
                    args.push("-r".into());
                }
                args.push(self.name.clone());
                let name = self.name.clone();
                return Ok(vec![ensure_change(apply, exists, want, || {
                    if want {
                        run_checked(root, args)
                    } else {
                        run_checked(root, vec!["groupdel".into(), name])
                    }
                })]);
            }
        }
        let mut changes = Vec::new();
        if let (Some(f), Some(g), true) = (current, &self.gid, self.ensure != Some(false)) {
            let name = self.name.clone();
            let have = f.get(2).cloned().unwrap_or_default();
            property(&mut changes, apply, "gid", have, g.clone(), || {
                run_checked(root, vec!["groupmod".into(), "-g".into(), g.clone(), name])
            });
        }
        Ok(changes)
    }
}
