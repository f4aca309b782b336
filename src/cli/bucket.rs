//! `ordo bucket list|restore`: the content that applies replaced or removed.

use crate::apply::bucket::{format_time, Bucket};
use crate::apply::state::{StateDir, DEFAULT_STATE_DIR};
use std::path::PathBuf;

#[derive(clap::Args, Debug, Clone)]
pub struct BucketArgs {
    #[command(subcommand)]
    pub action: BucketAction,
    /// Ordo's state directory; the bucket is its `clientbucket/` unless --bucket is given.
    #[arg(long, global = true, default_value = DEFAULT_STATE_DIR)]
    pub state_dir: PathBuf,
    /// The bucket directory.
    #[arg(long = "bucket", alias = "bucket-dir", global = true)]
    pub bucket_dir: Option<PathBuf>,
}

#[derive(clap::Subcommand, Debug, Clone)]
pub enum BucketAction {
    /// List the backups, oldest first: checksum, time (UTC), path.
    List,
    /// Restore a backup, named by its checksum (or a unique prefix of it) or by the path it was
    /// taken from (its latest backup), to that path or to DEST. The file it replaces is backed
    /// up first.
    Restore {
        /// A checksum, a checksum prefix (6 hex digits or more) or an absolute path.
        key: String,
        /// Where to write it (default: the path it was taken from).
        dest: Option<PathBuf>,
    },
}

impl BucketArgs {
    pub fn bucket(&self) -> Bucket {
        Bucket::new(
            self.bucket_dir
                .clone()
                .unwrap_or_else(|| StateDir::new(&self.state_dir).bucket_dir()),
        )
    }
}

pub fn run(args: &BucketArgs) -> i32 {
    let bucket = args.bucket();
    match &args.action {
        BucketAction::List => match bucket.list() {
            Ok(entries) => {
                for e in entries {
                    println!("{} {} {}", e.sum, format_time(e.time), e.path.display());
                }
                0
            }
            Err(e) => {
                eprintln!(
                    "Error: Could not read bucket {}: {e}",
                    bucket.dir().display()
                );
                1
            }
        },
        BucketAction::Restore { key, dest } => match bucket.restore(key, dest.as_deref()) {
            Ok((entry, dest)) => {
                println!(
                    "Restored {} ({} from {}) to {}",
                    entry.sum,
                    format_time(entry.time),
                    entry.path.display(),
                    dest.display()
                );
                0
            }
            Err(e) => {
                eprintln!("Error: {e}");
                1
            }
        },
    }
}
