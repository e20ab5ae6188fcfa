//! Framework adapters on top of the REST service: they derive the principal from the
//! current agent run, register the five memory tools, record session turns and attach
//! search context. (Arrives with the adapter issues.)
