//! Values: the runtime values of the Puppet language and how Puppet and Ruby print them,
//! strings and their formats, timespans and time zones, PSON, and Ruby's random numbers.
//! Nothing here knows the compiler: it is data and functions over data.

pub(in crate::eval) mod numbers;
pub(in crate::eval) mod pson;
pub(in crate::eval) mod ruby_print;
pub(in crate::eval) mod ruby_random;
pub(in crate::eval) mod strings;
pub mod timespan;
pub(in crate::eval) mod timezone;
pub mod value;
