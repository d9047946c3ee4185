//! Observes the machine.
