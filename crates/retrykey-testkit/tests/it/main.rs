//! The testkit's own checks: the fault proxy's aim and the charge count, against stand-ins for
//! the server that speak just enough of each protocol, so that they need no database.

mod load;
mod proxy;
