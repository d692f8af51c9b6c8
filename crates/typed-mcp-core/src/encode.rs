//! Writing JSON-RPC messages: compact, single-line, ids echoed exactly.
//!
//! Every value is written by a compact JSON writer of this module whose
//! output is byte for byte `serde_json`'s (see [`to_vec`]): strings, the bulk
//! of a large result, are escaped eight bytes at a time, and a `RawValue` is
//! copied as it is. Whatever it does not handle itself (a map key that is not
//! a string) is written by `serde_json`.

use std::fmt;

use serde::Serialize;
use serde::ser::{self, Impossible};

use crate::{RequestId, RpcError};

/// `{"jsonrpc":"2.0","id":<id>,"result":<result>}`.
pub fn result<T: Serialize + ?Sized>(id: &RequestId, result: &T) -> Vec<u8> {
    in_scratch(|out| {
        put_head(out, Some(id), b"result");
        write_json(out, result)?;
        out.push(b'}');
        Ok(())
    })
    .unwrap_or_else(|e: serde_json::Error| {
        error(
            Some(id),
            &RpcError::internal(format!("the result could not be encoded: {e}")),
        )
    })
}

/// Like [`result`], with `meta_json` (one JSON object, already encoded)
/// written as the result's last member, `_meta`. `result` must serialize as
/// an object with no `_meta` of its own.
///
/// A server's results all carry the same `_meta` (its serverInfo), so it is
/// encoded once instead of on every call. The bytes are those of [`result`]
/// for a result whose `_meta` is serialized last and encodes as `meta_json`.
///
/// ```
/// use typed_mcp_core::{RequestId, encode};
/// let id = RequestId::from("7");
/// let body = encode::result_with_meta(&id, &serde_json::json!({"a": 1}), r#"{"k":2}"#);
/// assert_eq!(body, br#"{"jsonrpc":"2.0","id":"7","result":{"a":1,"_meta":{"k":2}}}"#);
/// ```
pub fn result_with_meta<T: Serialize + ?Sized>(
    id: &RequestId,
    result: &T,
    meta_json: &str,
) -> Vec<u8> {
    result_with_meta_sized(id, result, meta_json, 0)
}

/// Like [`result_with_meta`], with room for `expected_len` bytes taken
/// before writing: a large result written into a buffer grown by doubling
/// was copied whole at every doubling (a 1 MB tool result and its text
/// block, three megabytes of copies). The bytes are the same whatever the
/// hint.
///
/// ```
/// use typed_mcp_core::{RequestId, encode};
/// let id = RequestId::from("7");
/// let value = serde_json::json!({"a": 1});
/// assert_eq!(
///     encode::result_with_meta_sized(&id, &value, "{}", 1 << 20),
///     encode::result_with_meta(&id, &value, "{}"),
/// );
/// ```
pub fn result_with_meta_sized<T: Serialize + ?Sized>(
    id: &RequestId,
    result: &T,
    meta_json: &str,
    expected_len: usize,
) -> Vec<u8> {
    in_scratch(|out| {
        out.reserve(expected_len);
        put_head(out, Some(id), b"result");
        let start = out.len();
        write_json(out, result).map_err(|e| e.to_string())?;
        if out.len() < start + 2 || out[start] != b'{' || out.last() != Some(&b'}') {
            return Err("it is not a JSON object".to_owned());
        }
        out.pop();
        if out.len() > start + 1 {
            out.push(b',');
        }
        out.reserve(meta_json.len() + 11);
        out.extend_from_slice(b"\"_meta\":");
        out.extend_from_slice(meta_json.as_bytes());
        out.extend_from_slice(b"}}");
        Ok(())
    })
    .unwrap_or_else(|e| {
        error(
            Some(id),
            &RpcError::internal(format!("the result could not be encoded: {e}")),
        )
    })
}

/// Like [`result`], for a result already serialized as one JSON object.
pub fn result_raw(id: &RequestId, result_json: &str) -> Vec<u8> {
    let mut out = head(Some(id), b"result");
    out.reserve(result_json.len() + 1);
    out.extend_from_slice(result_json.as_bytes());
    out.push(b'}');
    out
}

/// `{"jsonrpc":"2.0","id":<id>,"error":{...}}`; the `id` is omitted when it
/// could not be read from the request.
pub fn error(id: Option<&RequestId>, error: &RpcError) -> Vec<u8> {
    let mut out = head(id, b"error");
    serde_json::to_writer(&mut out, error).expect("an error object always serializes");
    out.push(b'}');
    out
}

/// `{"jsonrpc":"2.0","method":<method>,"params":<params>}`.
pub fn notification<P: Serialize + ?Sized>(method: &str, params: &P) -> Vec<u8> {
    let mut out = Vec::with_capacity(128);
    out.extend_from_slice(b"{\"jsonrpc\":\"2.0\",\"method\":");
    serde_json::to_writer(&mut out, method).expect("a string serializes");
    out.extend_from_slice(b",\"params\":");
    write_json(&mut out, params).expect("notification params serialize");
    out.push(b'}');
    out
}

/// `value` as compact JSON: exactly the bytes of `serde_json::to_vec`, and
/// the same error, written faster when the value holds long strings.
///
/// # Errors
///
/// When `value`'s `Serialize` fails, or a map has keys JSON cannot hold.
pub fn to_vec<T: Serialize + ?Sized>(value: &T) -> serde_json::Result<Vec<u8>> {
    in_scratch(|out| write_json(out, value))
}

/// Like [`to_vec`], as a `String`.
///
/// # Errors
///
/// As [`to_vec`].
pub fn to_string<T: Serialize + ?Sized>(value: &T) -> serde_json::Result<String> {
    let bytes = to_vec(value)?;
    // JSON written from Rust strings is UTF-8; a failure here is a bug.
    Ok(String::from_utf8(bytes).expect("JSON text is UTF-8"))
}

/// Appends `value`'s compact JSON to `out`. The fast writer goes first; when
/// it refuses (something only `serde_json` knows how to write, or an error),
/// what it wrote is taken back and `serde_json` writes the value, so the
/// bytes and the errors are always `serde_json`'s.
fn write_json<T: Serialize + ?Sized>(out: &mut Vec<u8>, value: &T) -> serde_json::Result<()> {
    let start = out.len();
    if value.serialize(&mut Fast { out: &mut *out }).is_ok() {
        return Ok(());
    }
    out.truncate(start);
    serde_json::to_writer(out, value)
}

/// The longest message [`in_scratch`] copies out of its buffer; a longer one
/// takes the buffer with it.
const SCRATCH_KEPT_UP_TO: usize = 64 * 1024;

thread_local! {
    /// The buffer messages are written in, kept from one message to the next.
    static SCRATCH: std::cell::RefCell<Vec<u8>> = const { std::cell::RefCell::new(Vec::new()) };
}

/// The bytes `write` puts in an empty buffer. The buffer is the thread's
/// scratch, kept between messages, and the message is copied out at its exact
/// size: a message of tens of kilobytes grown by doubling from a small
/// buffer, then freed, made the allocator hand the top of its heap back and
/// fault it in again for the next one (measured: a page fault every few
/// calls, about 15% of a 10 kB call's CPU). A message over
/// [`SCRATCH_KEPT_UP_TO`] takes the buffer instead of a copy, so a thread
/// keeps at most twice that (a buffer grown by doubling), for as long as the
/// thread lives.
fn in_scratch<E>(write: impl FnOnce(&mut Vec<u8>) -> Result<(), E>) -> Result<Vec<u8>, E> {
    SCRATCH.with(|cell| {
        // Busy when a value being written writes a message itself.
        let Ok(mut scratch) = cell.try_borrow_mut() else {
            let mut out = Vec::with_capacity(256);
            write(&mut out)?;
            return Ok(out);
        };
        scratch.clear();
        let written = write(&mut scratch);
        let out = if scratch.len() > SCRATCH_KEPT_UP_TO {
            std::mem::take(&mut *scratch)
        } else {
            scratch.as_slice().to_vec()
        };
        written.map(|()| out)
    })
}

fn head(id: Option<&RequestId>, member: &[u8]) -> Vec<u8> {
    let mut out = Vec::with_capacity(256);
    put_head(&mut out, id, member);
    out
}

/// Appends `{"jsonrpc":"2.0","id":<id>,"<member>":` to `out`.
fn put_head(out: &mut Vec<u8>, id: Option<&RequestId>, member: &[u8]) {
    out.extend_from_slice(b"{\"jsonrpc\":\"2.0\",");
    if let Some(id) = id {
        out.extend_from_slice(b"\"id\":");
        serde_json::to_writer(&mut *out, id).expect("an id always serializes");
        out.push(b',');
    }
    out.push(b'"');
    out.extend_from_slice(member);
    out.extend_from_slice(b"\":");
}

// ---------------------------------------------------------------------------
// The fast writer
// ---------------------------------------------------------------------------

/// The struct name (and its one field's name) by which `serde_json`
/// recognizes its `RawValue`, whose text is copied as it is.
const RAW_VALUE_TOKEN: &str = "$serde_json::private::RawValue";

/// Why [`Fast`] gave a value back to `serde_json`: never seen by a caller.
#[derive(Debug)]
struct Refused;

impl fmt::Display for Refused {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("written by serde_json instead")
    }
}

impl std::error::Error for Refused {}

impl ser::Error for Refused {
    fn custom<T: fmt::Display>(_: T) -> Self {
        Refused
    }
}

/// A compact JSON writer producing `serde_json`'s bytes. Numbers are written
/// by `serde_json` itself (same digits); strings by [`escape_str`].
struct Fast<'o> {
    out: &'o mut Vec<u8>,
}

impl Fast<'_> {
    /// A scalar, written by `serde_json` (no string in it).
    fn scalar<T: Serialize>(&mut self, value: T) -> Result<(), Refused> {
        serde_json::to_writer(&mut *self.out, &value).map_err(|_| Refused)
    }

    /// `{"<variant>":` of an enum variant with content.
    fn open_variant(&mut self, variant: &str) {
        self.out.push(b'{');
        escape_str(self.out, variant);
        self.out.push(b':');
    }
}

/// A sequence, map or struct being written: `close` ends it.
struct Compound<'s, 'o> {
    ser: &'s mut Fast<'o>,
    first: bool,
    close: &'static [u8],
    /// A `RawValue`: its one field is JSON text, copied as it is.
    verbatim: bool,
}

impl Compound<'_, '_> {
    fn comma(&mut self) {
        if self.first {
            self.first = false;
        } else {
            self.ser.out.push(b',');
        }
    }

    fn element<T: Serialize + ?Sized>(&mut self, value: &T) -> Result<(), Refused> {
        self.comma();
        value.serialize(&mut *self.ser)
    }

    fn field<T: Serialize + ?Sized>(&mut self, key: &str, value: &T) -> Result<(), Refused> {
        if self.verbatim {
            return value.serialize(Key {
                out: &mut *self.ser.out,
                verbatim: true,
            });
        }
        self.comma();
        escape_str(self.ser.out, key);
        self.ser.out.push(b':');
        value.serialize(&mut *self.ser)
    }

    fn end(self) -> Result<(), Refused> {
        self.ser.out.extend_from_slice(self.close);
        Ok(())
    }
}

impl<'s, 'o> Fast<'o> {
    fn compound(&'s mut self, open: &[u8], close: &'static [u8]) -> Compound<'s, 'o> {
        self.out.extend_from_slice(open);
        Compound {
            ser: self,
            first: true,
            close,
            verbatim: false,
        }
    }
}

macro_rules! scalars {
    ($($method:ident: $ty:ty),* $(,)?) => {
        $(fn $method(self, v: $ty) -> Result<(), Refused> {
            self.scalar(v)
        })*
    };
}

impl<'s, 'o> ser::Serializer for &'s mut Fast<'o> {
    type Ok = ();
    type Error = Refused;
    type SerializeSeq = Compound<'s, 'o>;
    type SerializeTuple = Compound<'s, 'o>;
    type SerializeTupleStruct = Compound<'s, 'o>;
    type SerializeTupleVariant = Compound<'s, 'o>;
    type SerializeMap = Compound<'s, 'o>;
    type SerializeStruct = Compound<'s, 'o>;
    type SerializeStructVariant = Compound<'s, 'o>;

    scalars! {
        serialize_i8: i8, serialize_i16: i16, serialize_i32: i32, serialize_i64: i64,
        serialize_i128: i128, serialize_u8: u8, serialize_u16: u16, serialize_u32: u32,
        serialize_u64: u64, serialize_u128: u128, serialize_f32: f32, serialize_f64: f64,
    }

    fn serialize_bool(self, v: bool) -> Result<(), Refused> {
        self.out
            .extend_from_slice(if v { b"true" as &[u8] } else { b"false" });
        Ok(())
    }

    fn serialize_char(self, v: char) -> Result<(), Refused> {
        escape_str(self.out, v.encode_utf8(&mut [0; 4]));
        Ok(())
    }

    fn serialize_str(self, v: &str) -> Result<(), Refused> {
        escape_str(self.out, v);
        Ok(())
    }

    fn serialize_bytes(self, v: &[u8]) -> Result<(), Refused> {
        self.scalar(v)
    }

    fn serialize_none(self) -> Result<(), Refused> {
        self.out.extend_from_slice(b"null");
        Ok(())
    }

    fn serialize_some<T: Serialize + ?Sized>(self, value: &T) -> Result<(), Refused> {
        value.serialize(self)
    }

    fn serialize_unit(self) -> Result<(), Refused> {
        self.serialize_none()
    }

    fn serialize_unit_struct(self, _: &'static str) -> Result<(), Refused> {
        self.serialize_none()
    }

    fn serialize_unit_variant(
        self,
        _: &'static str,
        _: u32,
        variant: &'static str,
    ) -> Result<(), Refused> {
        self.serialize_str(variant)
    }

    fn serialize_newtype_struct<T: Serialize + ?Sized>(
        self,
        _: &'static str,
        value: &T,
    ) -> Result<(), Refused> {
        value.serialize(self)
    }

    fn serialize_newtype_variant<T: Serialize + ?Sized>(
        self,
        _: &'static str,
        _: u32,
        variant: &'static str,
        value: &T,
    ) -> Result<(), Refused> {
        self.open_variant(variant);
        value.serialize(&mut *self)?;
        self.out.push(b'}');
        Ok(())
    }

    fn serialize_seq(self, _: Option<usize>) -> Result<Compound<'s, 'o>, Refused> {
        Ok(self.compound(b"[", b"]"))
    }

    fn serialize_tuple(self, _: usize) -> Result<Compound<'s, 'o>, Refused> {
        Ok(self.compound(b"[", b"]"))
    }

    fn serialize_tuple_struct(
        self,
        _: &'static str,
        _: usize,
    ) -> Result<Compound<'s, 'o>, Refused> {
        Ok(self.compound(b"[", b"]"))
    }

    fn serialize_tuple_variant(
        self,
        _: &'static str,
        _: u32,
        variant: &'static str,
        _: usize,
    ) -> Result<Compound<'s, 'o>, Refused> {
        self.open_variant(variant);
        Ok(self.compound(b"[", b"]}"))
    }

    fn serialize_map(self, _: Option<usize>) -> Result<Compound<'s, 'o>, Refused> {
        Ok(self.compound(b"{", b"}"))
    }

    fn serialize_struct(self, name: &'static str, _: usize) -> Result<Compound<'s, 'o>, Refused> {
        if name == RAW_VALUE_TOKEN {
            let mut raw = self.compound(b"", b"");
            raw.verbatim = true;
            return Ok(raw);
        }
        Ok(self.compound(b"{", b"}"))
    }

    fn serialize_struct_variant(
        self,
        _: &'static str,
        _: u32,
        variant: &'static str,
        _: usize,
    ) -> Result<Compound<'s, 'o>, Refused> {
        self.open_variant(variant);
        Ok(self.compound(b"{", b"}}"))
    }
}

/// The four array-like compounds: every element is one value after a comma.
macro_rules! array_compound {
    ($($trait:ident :: $method:ident),*) => {$(
        impl ser::$trait for Compound<'_, '_> {
            type Ok = ();
            type Error = Refused;
            fn $method<T: Serialize + ?Sized>(&mut self, value: &T) -> Result<(), Refused> {
                self.element(value)
            }
            fn end(self) -> Result<(), Refused> {
                Compound::end(self)
            }
        }
    )*};
}

array_compound!(
    SerializeSeq::serialize_element,
    SerializeTuple::serialize_element,
    SerializeTupleStruct::serialize_field,
    SerializeTupleVariant::serialize_field
);

impl ser::SerializeMap for Compound<'_, '_> {
    type Ok = ();
    type Error = Refused;
    fn serialize_key<T: Serialize + ?Sized>(&mut self, key: &T) -> Result<(), Refused> {
        self.comma();
        key.serialize(Key {
            out: &mut *self.ser.out,
            verbatim: false,
        })?;
        self.ser.out.push(b':');
        Ok(())
    }
    fn serialize_value<T: Serialize + ?Sized>(&mut self, value: &T) -> Result<(), Refused> {
        value.serialize(&mut *self.ser)
    }
    fn end(self) -> Result<(), Refused> {
        Compound::end(self)
    }
}

/// The two struct-like compounds: every field is a key and a value.
macro_rules! struct_compound {
    ($($trait:ident),*) => {$(
        impl ser::$trait for Compound<'_, '_> {
            type Ok = ();
            type Error = Refused;
            fn serialize_field<T: Serialize + ?Sized>(
                &mut self,
                key: &'static str,
                value: &T,
            ) -> Result<(), Refused> {
                self.field(key, value)
            }
            fn end(self) -> Result<(), Refused> {
                Compound::end(self)
            }
        }
    )*};
}

struct_compound!(SerializeStruct, SerializeStructVariant);

/// A map key: strings (and what `serde_json` writes as one, a `char`, a
/// unit variant) are written here; any other key is refused, so
/// `serde_json` writes it (or reports it) by its own rules. Also the text of
/// a `RawValue` (`verbatim`), copied without quotes or escapes.
struct Key<'o> {
    out: &'o mut Vec<u8>,
    verbatim: bool,
}

macro_rules! refused {
    ($($method:ident: $ty:ty),* $(,)?) => {
        $(fn $method(self, _: $ty) -> Result<(), Refused> {
            Err(Refused)
        })*
    };
}

impl ser::Serializer for Key<'_> {
    type Ok = ();
    type Error = Refused;
    type SerializeSeq = Impossible<(), Refused>;
    type SerializeTuple = Impossible<(), Refused>;
    type SerializeTupleStruct = Impossible<(), Refused>;
    type SerializeTupleVariant = Impossible<(), Refused>;
    type SerializeMap = Impossible<(), Refused>;
    type SerializeStruct = Impossible<(), Refused>;
    type SerializeStructVariant = Impossible<(), Refused>;

    refused! {
        serialize_bool: bool, serialize_i8: i8, serialize_i16: i16, serialize_i32: i32,
        serialize_i64: i64, serialize_i128: i128, serialize_u8: u8, serialize_u16: u16,
        serialize_u32: u32, serialize_u64: u64, serialize_u128: u128, serialize_f32: f32,
        serialize_f64: f64, serialize_bytes: &[u8],
    }

    fn serialize_char(self, v: char) -> Result<(), Refused> {
        if self.verbatim {
            return Err(Refused);
        }
        escape_str(self.out, v.encode_utf8(&mut [0; 4]));
        Ok(())
    }

    fn serialize_str(self, v: &str) -> Result<(), Refused> {
        if self.verbatim {
            self.out.extend_from_slice(v.as_bytes());
        } else {
            escape_str(self.out, v);
        }
        Ok(())
    }

    fn serialize_none(self) -> Result<(), Refused> {
        Err(Refused)
    }

    fn serialize_some<T: Serialize + ?Sized>(self, _: &T) -> Result<(), Refused> {
        Err(Refused)
    }

    fn serialize_unit(self) -> Result<(), Refused> {
        Err(Refused)
    }

    fn serialize_unit_struct(self, _: &'static str) -> Result<(), Refused> {
        Err(Refused)
    }

    fn serialize_unit_variant(
        self,
        _: &'static str,
        _: u32,
        variant: &'static str,
    ) -> Result<(), Refused> {
        if self.verbatim {
            return Err(Refused);
        }
        self.serialize_str(variant)
    }

    fn serialize_newtype_struct<T: Serialize + ?Sized>(
        self,
        _: &'static str,
        value: &T,
    ) -> Result<(), Refused> {
        value.serialize(self)
    }

    fn serialize_newtype_variant<T: Serialize + ?Sized>(
        self,
        _: &'static str,
        _: u32,
        _: &'static str,
        _: &T,
    ) -> Result<(), Refused> {
        Err(Refused)
    }

    fn serialize_seq(self, _: Option<usize>) -> Result<Self::SerializeSeq, Refused> {
        Err(Refused)
    }

    fn serialize_tuple(self, _: usize) -> Result<Self::SerializeTuple, Refused> {
        Err(Refused)
    }

    fn serialize_tuple_struct(
        self,
        _: &'static str,
        _: usize,
    ) -> Result<Self::SerializeTupleStruct, Refused> {
        Err(Refused)
    }

    fn serialize_tuple_variant(
        self,
        _: &'static str,
        _: u32,
        _: &'static str,
        _: usize,
    ) -> Result<Self::SerializeTupleVariant, Refused> {
        Err(Refused)
    }

    fn serialize_map(self, _: Option<usize>) -> Result<Self::SerializeMap, Refused> {
        Err(Refused)
    }

    fn serialize_struct(self, _: &'static str, _: usize) -> Result<Self::SerializeStruct, Refused> {
        Err(Refused)
    }

    fn serialize_struct_variant(
        self,
        _: &'static str,
        _: u32,
        _: &'static str,
        _: usize,
    ) -> Result<Self::SerializeStructVariant, Refused> {
        Err(Refused)
    }
}

/// What follows the backslash for each byte that must be escaped in a JSON
/// string (0 for none), as `serde_json` writes it: the short forms where
/// JSON has them, `u` (`\u00XX`, lower-case hex) for the other controls.
const ESCAPE: [u8; 256] = {
    let mut table = [0u8; 256];
    let mut b = 0;
    while b < 0x20 {
        table[b] = b'u';
        b += 1;
    }
    table[0x08] = b'b';
    table[0x09] = b't';
    table[0x0a] = b'n';
    table[0x0c] = b'f';
    table[0x0d] = b'r';
    table[b'"' as usize] = b'"';
    table[b'\\' as usize] = b'\\';
    table
};

const ONES: u64 = 0x0101_0101_0101_0101;
const HIGH: u64 = 0x8080_8080_8080_8080;

/// Non-zero when any of the eight bytes of `word` (the first in the low
/// byte) may need an escape: a control (below 0x20), a quote or a
/// backslash. Never zero when one does; the lowest flagged byte is exact (a
/// borrow can flag bytes above it), so it also finds where a string's plain
/// run ends.
pub(crate) fn flags(word: u64) -> u64 {
    let zero = |v: u64| v.wrapping_sub(ONES) & !v & HIGH;
    let control = word.wrapping_sub(ONES * 0x20) & !word & HIGH;
    control | zero(word ^ (ONES * u64::from(b'"'))) | zero(word ^ (ONES * u64::from(b'\\')))
}

/// False only when no byte of `bytes` needs an escape: whole words, then the
/// last eight bytes as one word (overlapping ones already checked); a string
/// shorter than a word byte by byte.
fn may_need_escape(bytes: &[u8]) -> bool {
    let len = bytes.len();
    if len < 8 {
        return bytes.iter().any(|&b| ESCAPE[usize::from(b)] != 0);
    }
    let word = |at: usize| u64::from_le_bytes(bytes[at..at + 8].try_into().expect("eight bytes"));
    (0..len / 8).any(|k| flags(word(k * 8)) != 0) || flags(word(len - 8)) != 0
}

/// Appends `s` as a JSON string, quotes included, escaped as `serde_json`
/// escapes it. Runs without an escape are found eight bytes at a time and
/// copied whole, so a long string costs little more than a copy.
fn escape_str(out: &mut Vec<u8>, s: &str) {
    const HEX: &[u8; 16] = b"0123456789abcdef";
    let bytes = s.as_bytes();
    // Room for a few escapes and what follows the string (a closing
    // bracket, the next key): a long string that filled the buffer exactly
    // made the next byte copy the whole message into a buffer twice as large.
    out.reserve(bytes.len() + bytes.len() / 64 + 32);
    out.push(b'"');
    // Most strings (every key, most values) hold nothing to escape: copied
    // whole once a scan finds none, without the per-byte walk of a tail.
    if !may_need_escape(bytes) {
        out.extend_from_slice(bytes);
        out.push(b'"');
        return;
    }
    let word = |at: usize| u64::from_le_bytes(bytes[at..at + 8].try_into().expect("eight bytes"));
    let mut run = 0;
    let mut i = 0;
    while i < bytes.len() {
        // Thirty-two bytes a step while none needs an escape, then eight,
        // then the bytes of the block that may hold one, one at a time.
        let end = if i + 32 <= bytes.len() {
            let any =
                flags(word(i)) | flags(word(i + 8)) | flags(word(i + 16)) | flags(word(i + 24));
            if any == 0 {
                i += 32;
                continue;
            }
            i + 32
        } else if i + 8 <= bytes.len() {
            if flags(word(i)) == 0 {
                i += 8;
                continue;
            }
            i + 8
        } else {
            bytes.len()
        };
        while i < end {
            let b = bytes[i];
            let escape = ESCAPE[usize::from(b)];
            if escape != 0 {
                out.extend_from_slice(&bytes[run..i]);
                match escape {
                    b'u' => out.extend_from_slice(&[
                        b'\\',
                        b'u',
                        b'0',
                        b'0',
                        HEX[usize::from(b >> 4)],
                        HEX[usize::from(b & 0xf)],
                    ]),
                    short => out.extend_from_slice(&[b'\\', short]),
                }
                run = i + 1;
            }
            i += 1;
        }
    }
    out.extend_from_slice(&bytes[run..]);
    out.push(b'"');
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn a_meta_given_encoded_gives_the_bytes_of_the_meta_serialized() {
        use crate::wire::{
            CacheHint, CallToolResult, CompleteResult, Completion, GetPromptResult, Implementation,
            InputRequiredResult, ReadResourceResult, ResourceContents, ResultMeta,
        };
        let info = std::sync::Arc::new(Implementation::new("desk", "1.0.0"));
        let meta_json = to_string(&ResultMeta::server(info.clone())).unwrap();
        let id = RequestId::from("q");
        // Every result the pipeline stamps so: `_meta` must be serialized last.
        macro_rules! same_bytes {
            ($($result:expr),* $(,)?) => {$({
                let mut result = $result;
                let spliced = result_with_meta(&id, &result, &meta_json);
                result.meta = ResultMeta::server(info.clone());
                assert_eq!(
                    String::from_utf8(spliced).unwrap(),
                    String::from_utf8(super::result(&id, &result)).unwrap()
                );
            })*};
        }
        same_bytes!(
            CallToolResult::text("4"),
            CallToolResult::structured(json!({"a": [1, {"b": "\"x\"\n"}]})),
            CallToolResult::error("no"),
            CallToolResult::default(),
            GetPromptResult::new(Vec::new()),
            InputRequiredResult::new(serde_json::Map::new()),
            ReadResourceResult::new(
                vec![ResourceContents::text("a://b", Some("text/plain"), "c")],
                CacheHint::PRIVATE_NOW,
            ),
            CompleteResult::new(Completion::new(vec!["x".into()]).with_total(1)),
        );
        // An empty object takes no comma.
        assert_eq!(
            result_with_meta(&id, &json!({}), "{}"),
            br#"{"jsonrpc":"2.0","id":"q","result":{"_meta":{}}}"#
        );
    }

    #[test]
    fn messages_written_in_the_scratch_buffer_do_not_leak_into_each_other() {
        use serde::ser::{Error as _, SerializeMap as _};
        struct FailsHalfway;
        impl Serialize for FailsHalfway {
            fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
                let mut map = s.serialize_map(None)?;
                map.serialize_entry("half", "written")?;
                Err(S::Error::custom("refused"))
            }
        }
        let id = RequestId::from("s");
        let small = || result(&id, &json!({"n": 1}));
        let expected = br#"{"jsonrpc":"2.0","id":"s","result":{"n":1}}"#;
        assert_eq!(small(), expected);
        // Longer than the buffer keeps: it takes the buffer along.
        let big = json!({"t": "x".repeat(SCRATCH_KEPT_UP_TO * 2)});
        let v: serde_json::Value = serde_json::from_slice(&result(&id, &big)).unwrap();
        assert_eq!(v["result"], big);
        assert_eq!(small(), expected);
        let v: serde_json::Value = serde_json::from_slice(&result(&id, &FailsHalfway)).unwrap();
        assert_eq!(v["error"]["code"], -32603);
        assert!(to_vec(&FailsHalfway).is_err());
        assert_eq!(small(), expected);
        assert_eq!(to_vec(&json!([1])).unwrap(), b"[1]");
    }

    #[test]
    fn a_value_that_writes_json_while_it_is_written_gets_its_own_buffer() {
        struct Nested;
        impl Serialize for Nested {
            fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
                let inner = to_string(&json!({"in": [1, 2]})).map_err(serde::ser::Error::custom)?;
                s.serialize_str(&inner)
            }
        }
        let id = RequestId::from("n");
        assert_eq!(
            result(&id, &Nested),
            br#"{"jsonrpc":"2.0","id":"n","result":"{\"in\":[1,2]}"}"#
        );
        assert_eq!(
            to_string(&[Nested, Nested]).unwrap(),
            r#"["{\"in\":[1,2]}","{\"in\":[1,2]}"]"#
        );
    }

    #[test]
    fn a_meta_on_a_result_that_is_not_an_object_is_an_internal_error() {
        let id = RequestId::from("q");
        for result in [json!([1, 2]), json!("text"), json!(7)] {
            let v: serde_json::Value =
                serde_json::from_slice(&result_with_meta(&id, &result, "{}")).unwrap();
            assert_eq!(v["error"]["code"], -32603, "{result}");
            assert_eq!(v["id"], "q");
        }
    }

    #[test]
    fn messages_are_single_line_and_echo_ids() {
        let id = RequestId::from("a\nb");
        let bytes = result(&id, &json!({"text": "x\ny"}));
        assert!(!bytes.contains(&b'\n'));
        let v: serde_json::Value = serde_json::from_slice(&bytes).unwrap();
        assert_eq!(
            v,
            json!({"jsonrpc":"2.0","id":"a\nb","result":{"text":"x\ny"}})
        );
    }

    #[test]
    fn errors_without_a_readable_id_omit_it() {
        let bytes = error(None, &RpcError::parse_error("bad"));
        let v: serde_json::Value = serde_json::from_slice(&bytes).unwrap();
        assert_eq!(
            v,
            json!({"jsonrpc":"2.0","error":{"code":-32700,"message":"bad"}})
        );
    }
}

#[cfg(test)]
mod fast_tests {
    //! The fast writer must write `serde_json`'s bytes, always.

    use std::collections::BTreeMap;

    use serde::Serialize;
    use serde_json::json;
    use serde_json::value::RawValue;

    use super::{escape_str, to_vec};

    #[track_caller]
    fn same<T: Serialize + ?Sized>(value: &T) {
        let expected = serde_json::to_vec(value).expect("serde_json writes it");
        let got = to_vec(value).expect("the fast writer writes it");
        assert_eq!(
            String::from_utf8_lossy(&got),
            String::from_utf8_lossy(&expected)
        );
    }

    #[test]
    fn every_ascii_byte_and_some_unicode_escape_as_serde_json_does() {
        for b in 0u8..0x80 {
            let c = char::from(b);
            // At every offset within and across eight-byte words.
            for pad in 0..20 {
                let s = format!("{}{c}{}", "a".repeat(pad), "b".repeat(pad % 9));
                same(&s);
                let mut fast = Vec::new();
                escape_str(&mut fast, &s);
                assert_eq!(fast, serde_json::to_vec(&s).unwrap(), "{b:#x} at {pad}");
            }
        }
        for s in [
            "",
            "é",
            "\u{7f}\u{80}\u{ff}",
            "日本語のテキスト\n\"引用\"\\",
            "🦀 crab \u{1f}\u{0}",
            "\u{2028}\u{2029}",
        ] {
            same(s);
            same(&s.repeat(13));
        }
        same(&"x".repeat(1_000_003));
        same(&"\"\\\n\u{1}".repeat(1000));
    }

    #[derive(Serialize)]
    enum Kinds {
        Unit,
        Newtype(i32),
        Tuple(u8, String),
        Struct { a: Option<f64>, b: Vec<u8> },
    }

    #[derive(Serialize)]
    struct Unit;

    #[derive(Serialize)]
    struct Wrapper(String);

    #[derive(Serialize)]
    struct Everything {
        unit: (),
        unit_struct: Unit,
        newtype: Wrapper,
        kinds: Vec<Kinds>,
        tuple: (i8, u128, i128, char),
        floats: [f64; 6],
        small: f32,
        bytes: serde_bytes_like::Bytes,
        none: Option<String>,
        map: BTreeMap<String, Vec<bool>>,
        raw: Box<RawValue>,
        #[serde(skip_serializing_if = "Option::is_none")]
        skipped: Option<u8>,
        #[serde(flatten)]
        flat: BTreeMap<String, i64>,
    }

    mod serde_bytes_like {
        /// Serialized with `serialize_bytes`.
        pub(super) struct Bytes(pub(super) Vec<u8>);
        impl serde::Serialize for Bytes {
            fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
                s.serialize_bytes(&self.0)
            }
        }
    }

    #[test]
    fn every_kind_of_value_is_written_as_serde_json_writes_it() {
        let value = Everything {
            unit: (),
            unit_struct: Unit,
            newtype: Wrapper("w\"".into()),
            kinds: vec![
                Kinds::Unit,
                Kinds::Newtype(-3),
                Kinds::Tuple(7, "t\t".into()),
                Kinds::Struct {
                    a: Some(0.1),
                    b: vec![0, 255],
                },
                Kinds::Struct { a: None, b: vec![] },
            ],
            tuple: (-128, u128::MAX, i128::MIN, '\u{1}'),
            floats: [0.0, -0.0, 1e300, f64::NAN, f64::INFINITY, 123.456],
            small: 0.1,
            bytes: serde_bytes_like::Bytes(vec![1, 2, 3]),
            none: None,
            map: BTreeMap::from([("k\n".into(), vec![true, false]), ("".into(), vec![])]),
            raw: RawValue::from_string(r#"{ "kept" : [1, 2] }"#.into()).unwrap(),
            skipped: None,
            flat: BTreeMap::from([("f".into(), 1)]),
        };
        same(&value);
        same(&json!({"result": {"a": [1, -2, 3.5, null, true, "x\u{0}"], "": {}}, "e": []}));
        same(&Kinds::Unit);
        same(&'c');
        same(&Some(Unit));
    }

    #[test]
    fn keys_serde_json_converts_or_refuses_are_left_to_it() {
        let numbers: BTreeMap<i32, &str> = BTreeMap::from([(1, "a"), (-2, "b")]);
        same(&numbers);
        let chars: BTreeMap<char, u8> = BTreeMap::from([('"', 1)]);
        same(&chars);
        let bools: BTreeMap<bool, u8> = BTreeMap::from([(true, 1)]);
        assert_eq!(
            to_vec(&bools).map_err(|e| e.to_string()),
            serde_json::to_vec(&bools).map_err(|e| e.to_string())
        );
        let lists: BTreeMap<Vec<u8>, u8> = BTreeMap::from([(vec![1], 1)]);
        assert_eq!(
            to_vec(&lists).unwrap_err().to_string(),
            serde_json::to_vec(&lists).unwrap_err().to_string()
        );
    }

    #[test]
    fn a_failing_value_reports_serde_json_s_error() {
        struct Fails;
        impl Serialize for Fails {
            fn serialize<S: serde::Serializer>(&self, _: S) -> Result<S::Ok, S::Error> {
                Err(serde::ser::Error::custom("nope"))
            }
        }
        assert_eq!(to_vec(&vec![Fails]).unwrap_err().to_string(), "nope");
        let id = crate::RequestId::from(1);
        let bytes = super::result(&id, &Fails);
        assert!(
            String::from_utf8_lossy(&bytes).contains("could not be encoded: nope"),
            "{}",
            String::from_utf8_lossy(&bytes)
        );
    }
}
