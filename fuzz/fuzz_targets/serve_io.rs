//! What the targets that drive `Server::serve_io` share: one current-thread
//! runtime for every input, and an output the target reads back.

use std::io::{self, Write};
use std::sync::{Arc, Mutex, OnceLock};

use tokio::io::AsyncRead;
use typed_mcp::Server;

/// Serves `input` to the end with `server` and returns every byte it wrote.
pub fn serve(server: &Server, input: impl AsyncRead + Unpin) -> Vec<u8> {
    static RUNTIME: OnceLock<tokio::runtime::Runtime> = OnceLock::new();
    let runtime = RUNTIME.get_or_init(|| {
        tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
            .expect("a runtime")
    });
    let out = Collected::default();
    runtime
        .block_on(server.clone().serve_io(input, out.clone()))
        .expect("serve_io ends without an I/O error");
    out.0.lock().unwrap().clone()
}

/// A `Write` read back after the writer thread ends.
#[derive(Clone, Default)]
struct Collected(Arc<Mutex<Vec<u8>>>);

impl Write for Collected {
    fn write(&mut self, bytes: &[u8]) -> io::Result<usize> {
        self.0.lock().unwrap().extend_from_slice(bytes);
        Ok(bytes.len())
    }
    fn flush(&mut self) -> io::Result<()> {
        Ok(())
    }
}
