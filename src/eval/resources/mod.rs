//! Resources and what the catalog is made of: declaring resources, classes and defines
//! (`catalog_ops`), their attributes, tags and index, collectors and exported resources,
//! Rudder priorities, provenance for `ordo check`, deferred values, and the catalog output.

pub(in crate::eval) mod catalog_ops;
pub(in crate::eval) mod collect;
pub(in crate::eval) mod deferred;
pub(in crate::eval) mod exported;
pub(in crate::eval) mod output;
pub(in crate::eval) mod params;
pub mod priority;
pub(in crate::eval) mod provenance;
pub(in crate::eval) mod res_index;
pub(in crate::eval) mod tags;
