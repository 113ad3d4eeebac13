//! Decoding events into views that borrow from the line: what every
//! adapter's typed decoding shares. Strings without escapes and values an
//! adapter only passes on stay slices of the input, so a line is scanned
//! about once and a steady stream allocates little per event (the figures
//! are in docs/performance.md).
//!
//! A view is read through the scanner ([`crate::json_scan`]) first, each
//! field by its type's [`Scan`] (or, for a nested view, [`InPlace::scan_in`]),
//! and through serde where the scanner gives up: the same values and the
//! same errors, at about half the cost on the lines agents write.

use std::borrow::Cow;

use serde_json::value::RawValue;
use serde_json::Value;

use crate::bad_line::BadLine;

/// Reads a view in place: `read_in_place!(View { "key" => field, "other" =>
/// other as Wrapper })` gives `View::read_into(text, &mut slot)`,
/// which fills a `View::default()` slot from a JSON object's keys, as
/// serde's derive would (a missing key leaves its field as it is, an
/// unknown key is skipped, a key written twice is an error) but without
/// moving the view: a derived view is built in its visitor and moved out
/// through each layer's `Result`, some five copies of a few hundred bytes a
/// line. A field read `as Wrapper` goes through that one-field newtype
/// (`OptCow`, `ScalarText`, `CowStr`), where the derive named a
/// `deserialize_with` or borrowed a `Cow<str>`; a field marked
/// `(required)` missing is an error, as it is to the derive.
/// Anything but an object is an error (serde's own words: "expected struct
/// View"), where a derived view also read an array by position. A field
/// marked `in place` is an `Option` of another such view, or of a
/// `SmallVec` of them, read into its parent's slot in turn ([`Present`]):
/// nested views are neither moved out of their visitors nor boxed to make
/// the moves cheaper. `read_into` (and `View::read`, by value) tries the
/// scanner's reading first, generated from the same list of fields, and
/// serde's wherever the scanner gives up; a test and the fuzz targets hold
/// the two to the same output (`by_serde_alone`).
macro_rules! read_in_place {
    ($view:ident { $($key:literal => $field:ident $(as $wrap:ident)? $(in $place:ident)? $(($required:ident))?),* $(,)? }) => {
        const _: () = {
            /// Fills the view it holds from an object's keys.
            struct Slot<'s, 'a>(&'s mut $view<'a>);

            impl<'a> $view<'a> {
                /// Reads `text`, a JSON object, into `slot` (a default view).
                #[allow(dead_code, reason = "a view nested in another may be read only there")]
                pub(crate) fn read_into(text: &'a str, slot: &mut $view<'a>) -> Result<(), serde_json::Error> {
                    use $crate::adapters::borrowed::InPlace;
                    if $crate::adapters::borrowed::scan_whole(text, |value| slot.scan_in(value)) {
                        return Ok(());
                    }
                    // Read again by serde, from a default view, for what the
                    // scanner leaves (and for the words of an error).
                    *slot = $view::default();
                    let mut reader = serde_json::Deserializer::from_str(text);
                    serde::de::DeserializeSeed::deserialize(Slot(slot), &mut reader).and_then(|()| reader.end())
                }
            }

            impl<'a> $view<'a> {
                /// Reads `text`, a JSON object, as a view ([`Self::read_into`]
                /// a default one): what `serde_json::from_str` gives, the
                /// scanner first.
                #[allow(dead_code, reason = "most views are read only in place")]
                pub(crate) fn read(text: &'a str) -> Result<$view<'a>, serde_json::Error> {
                    let mut view = $view::default();
                    Self::read_into(text, &mut view).map(|()| view)
                }
            }

            /// The view inside another one: read by value, once.
            impl<'de: 'a, 'a> serde::Deserialize<'de> for $view<'a> {
                fn deserialize<D: serde::Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
                    let mut view = $view::default();
                    serde::de::DeserializeSeed::deserialize(Slot(&mut view), deserializer)?;
                    Ok(view)
                }
            }

            impl<'de: 'a, 'a> $crate::adapters::borrowed::InPlace<'de> for $view<'a> {
                fn read_in<D: serde::Deserializer<'de>>(&mut self, deserializer: D) -> Result<(), D::Error> {
                    serde::de::DeserializeSeed::deserialize(Slot(self), deserializer)
                }

                fn scan_in(&mut self, value: $crate::json_scan::Value<'de>) -> Option<usize> {
                    #[allow(unused_imports, reason = "a view may have no field of a scanned type")]
                    use $crate::adapters::borrowed::Scan;
                    // Which keys came: a second one is left to serde, which
                    // refuses it.
                    struct Seen {
                        $($field: bool,)*
                    }
                    let mut seen = Seen { $($field: false,)* };
                    let end = value.object(|key, value| match key {
                        $($key => {
                            if std::mem::replace(&mut seen.$field, true) {
                                return None;
                            }
                            Some(read_in_place!(@scan value self.$field; $($wrap)?; $($place)?))
                        })*
                        _ => value.skip(),
                    })?;
                    $($(
                        if read_in_place!(@required $required) && !seen.$field {
                            return None;
                        }
                    )?)*
                    Some(end)
                }
            }

            impl<'de: 'a, 'a> serde::de::DeserializeSeed<'de> for Slot<'_, 'a> {
                type Value = ();
                fn deserialize<D: serde::Deserializer<'de>>(self, deserializer: D) -> Result<(), D::Error> {
                    deserializer.deserialize_map(self)
                }
            }

            impl<'de: 'a, 'a> serde::de::Visitor<'de> for Slot<'_, 'a> {
                type Value = ();
                fn expecting(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
                    f.write_str(concat!("struct ", stringify!($view)))
                }
                fn visit_map<M: serde::de::MapAccess<'de>>(self, mut map: M) -> Result<(), M::Error> {
                    // Which keys came: a second one is an error, as a
                    // derived view says.
                    struct Seen {
                        $($field: bool,)*
                    }
                    let mut seen = Seen { $($field: false,)* };
                    while let Some(key) = map.next_key::<$crate::adapters::borrowed::Key<'de>>()? {
                        match key.0.as_ref() {
                            $($key => {
                                if std::mem::replace(&mut seen.$field, true) {
                                    return Err(<M::Error as serde::de::Error>::duplicate_field($key));
                                }
                                read_in_place!(@read map self.0.$field; $($wrap)?; $($place)?);
                            })*
                            _ => {
                                map.next_value::<serde::de::IgnoredAny>()?;
                            }
                        }
                    }
                    $($(
                        if read_in_place!(@required $required) && !seen.$field {
                            return Err(<M::Error as serde::de::Error>::missing_field($key));
                        }
                    )?)*
                    Ok(())
                }
            }
        };
    };
    (@read $map:ident $slot:expr; $wrap:ident;) => {
        $slot = $map.next_value::<$crate::adapters::borrowed::$wrap<'de>>()?.0
    };
    (@read $map:ident $slot:expr;; place) => {
        $map.next_value_seed($crate::adapters::borrowed::Field(&mut $slot))?
    };
    (@read $map:ident $slot:expr;;) => {
        $slot = $map.next_value()?
    };
    (@scan $value:ident $slot:expr; $wrap:ident;) => {{
        let (read, end) = <$crate::adapters::borrowed::$wrap<'de> as Scan<'de>>::scan($value)?;
        $slot = read.0;
        end
    }};
    (@scan $value:ident $slot:expr;; place) => {
        $crate::adapters::borrowed::scan_field(&mut $slot, $value)?
    };
    (@scan $value:ident $slot:expr;;) => {{
        let (read, end) = Scan::scan($value)?;
        $slot = read;
        end
    }};
    // The one marker a field takes: any other word does not compile.
    (@required required) => {
        true
    };
}

#[cfg(any(test, fuzzing))]
thread_local! {
    /// Set while views are read by serde alone ([`by_serde_alone`]).
    static SERDE_ALONE: std::cell::Cell<bool> = const { std::cell::Cell::new(false) };
}

/// Whether a view is read through the scanner first: always, but where a
/// test or a fuzz target compares the two readings.
#[inline]
fn scanning() -> bool {
    #[cfg(any(test, fuzzing))]
    return !SERDE_ALONE.with(std::cell::Cell::get);
    #[cfg(not(any(test, fuzzing)))]
    true
}

/// Reads `text`, one JSON value with whitespace around it allowed, through
/// the scanner with `read`; `false` when the scanner gives up (or is off,
/// [`by_serde_alone`]), and the caller reads it through serde. Every
/// reader that has both readings asks here, so that switching the scanner
/// off reaches them all.
pub(crate) fn scan_whole<'a>(text: &'a str, read: impl FnOnce(crate::json_scan::Value<'a>) -> Option<usize>) -> bool {
    scanning() && crate::json_scan::Value::whole(text, read).is_some()
}

/// [`scan_whole`] for a raw value, JSON checked when it was read: what the
/// reader skips is measured, not checked again.
pub(crate) fn scan_raw<'a>(raw: Raw<'a>, read: impl FnOnce(crate::json_scan::Value<'a>) -> Option<usize>) -> bool {
    scanning() && crate::json_scan::Value::whole_checked(raw.get(), read).is_some()
}

/// Runs `f` with every view read by serde alone, the scanner off: for the
/// tests and fuzz targets that hold the two readings to the same output.
#[cfg(any(test, fuzzing))]
pub fn by_serde_alone<T>(f: impl FnOnce() -> T) -> T {
    struct Restore(bool);
    impl Drop for Restore {
        fn drop(&mut self) {
            SERDE_ALONE.with(|alone| alone.set(self.0));
        }
    }
    let _restore = Restore(SERDE_ALONE.with(|alone| alone.replace(true)));
    f()
}

/// A view [`read_in_place!`] reads: what lets a parent view read it into
/// a field of its own slot.
pub(crate) trait InPlace<'de>: Default {
    /// Fills this (default) view from an object's keys.
    fn read_in<D: serde::Deserializer<'de>>(&mut self, deserializer: D) -> Result<(), D::Error>;

    /// Fills this (default) view from an object's keys through the
    /// scanner; where the object ends, or `None` to leave it to serde.
    fn scan_in(&mut self, value: crate::json_scan::Value<'de>) -> Option<usize>;
}

/// What a field of views read in place ([`read_in_place!`]'s `in place`)
/// holds: a view, or a list of them. The field is an `Option` of it:
/// `null` leaves it `None`, as a derived `Option` would; an object is read
/// straight into a default view in the field, and each item of a list into
/// a default view pushed onto it.
pub(crate) trait Present<'de>: Sized {
    /// Reads a value that is not `null` into the field.
    fn read_present<D: serde::Deserializer<'de>>(field: &mut Option<Self>, deserializer: D) -> Result<(), D::Error>;

    /// [`Present::read_present`] through the scanner: where the value
    /// ends, or `None` to leave the line to serde.
    fn scan_present(field: &mut Option<Self>, value: crate::json_scan::Value<'de>) -> Option<usize>;
}

/// A view: read into a default one.
impl<'de, V: InPlace<'de>> Present<'de> for V {
    fn read_present<D: serde::Deserializer<'de>>(field: &mut Option<V>, deserializer: D) -> Result<(), D::Error> {
        field.insert(V::default()).read_in(deserializer)
    }

    fn scan_present(field: &mut Option<V>, value: crate::json_scan::Value<'de>) -> Option<usize> {
        field.insert(V::default()).scan_in(value)
    }
}

/// A list of views: each item read into a default view pushed onto it.
impl<'de, V: InPlace<'de>, const N: usize> Present<'de> for smallvec::SmallVec<[V; N]> {
    fn read_present<D: serde::Deserializer<'de>>(field: &mut Option<Self>, deserializer: D) -> Result<(), D::Error> {
        deserializer.deserialize_seq(Items(field.insert(smallvec::SmallVec::new())))
    }

    fn scan_present(field: &mut Option<Self>, value: crate::json_scan::Value<'de>) -> Option<usize> {
        let items = field.insert(smallvec::SmallVec::new());
        value.array(|item| {
            items.push(V::default());
            items.last_mut()?.scan_in(item)
        })
    }
}

/// A field of views (`in place`) read through the scanner: `None` for
/// `null`, as [`Field`] reads it, else read in place.
pub(crate) fn scan_field<'de, T: Present<'de>>(
    field: &mut Option<T>,
    value: crate::json_scan::Value<'de>,
) -> Option<usize> {
    if let Some(end) = value.null() {
        *field = None;
        return Some(end);
    }
    T::scan_present(field, value)
}

/// An object's one count field `key` read through the scanner, as serde's
/// derive reads a struct of that one `Option<u64>` field (other keys
/// skipped, `null` none); where the object ends. `None` leaves it to serde,
/// which refuses the key written twice or a value that is not a count.
pub(crate) fn scan_count_field(value: crate::json_scan::Value<'_>, key: &str) -> Option<(Option<u64>, usize)> {
    let mut count = None;
    let mut seen = false;
    let end = value.object(|name, value| {
        if name != key {
            return value.skip();
        }
        if std::mem::replace(&mut seen, true) {
            return None;
        }
        let (read, end) = Option::<u64>::scan(value)?;
        count = read;
        Some(end)
    })?;
    Some((count, end))
}

/// A field's value read through the scanner ([`crate::json_scan`]) as
/// serde reads it into the field's type, and where it ends; `None` leaves
/// the line to serde (anything this reading does not take exactly as
/// serde would: serde then reads it, or words why not).
pub(crate) trait Scan<'de>: Sized {
    fn scan(value: crate::json_scan::Value<'de>) -> Option<(Self, usize)>;
}

/// `null` is none, as serde reads an `Option`.
impl<'de, T: Scan<'de>> Scan<'de> for Option<T> {
    fn scan(value: crate::json_scan::Value<'de>) -> Option<(Self, usize)> {
        match value.null() {
            Some(end) => Some((None, end)),
            None => T::scan(value).map(|(read, end)| (Some(read), end)),
        }
    }
}

/// A view read in place, when it is a field's plain value: read into a
/// default one.
impl<'de, V: InPlace<'de>> Scan<'de> for V {
    fn scan(value: crate::json_scan::Value<'de>) -> Option<(Self, usize)> {
        let mut view = V::default();
        let end = view.scan_in(value)?;
        Some((view, end))
    }
}

/// [`Scan`] for a type serde's derive reads (one rarely sent, or small):
/// its value found by the scanner, then read alone by serde (which borrows
/// from the line as it would have).
macro_rules! scan_by_serde {
    ($type:ident $(<$lifetime:lifetime>)?) => {
        impl<'de: 'a, 'a> $crate::adapters::borrowed::Scan<'de> for $type$(<$lifetime>)? {
            fn scan(value: $crate::json_scan::Value<'de>) -> Option<(Self, usize)> {
                let (text, end) = value.raw()?;
                serde_json::from_str(text).ok().map(|read| (read, end))
            }
        }
    };
}

/// A number as serde reads it into an `f64`: a plain count exactly;
/// anything else is left to serde's own reading of numbers.
impl<'de> Scan<'de> for f64 {
    fn scan(value: crate::json_scan::Value<'de>) -> Option<(Self, usize)> {
        #[allow(clippy::cast_precision_loss, reason = "as serde converts a count it reads into an f64")]
        value.count().map(|(count, end)| (count as f64, end))
    }
}

impl<'de: 'a, 'a> Scan<'de> for Raw<'a> {
    fn scan(value: crate::json_scan::Value<'de>) -> Option<(Self, usize)> {
        value.raw().map(|(text, end)| (Raw(text), end))
    }
}

impl<'de> Scan<'de> for u64 {
    fn scan(value: crate::json_scan::Value<'de>) -> Option<(Self, usize)> {
        value.count()
    }
}

impl<'de> Scan<'de> for bool {
    fn scan(value: crate::json_scan::Value<'de>) -> Option<(Self, usize)> {
        value.boolean()
    }
}

impl<'de: 'a, 'a> Scan<'de> for CowStr<'a> {
    fn scan(value: crate::json_scan::Value<'de>) -> Option<(Self, usize)> {
        value.string().map(|(text, end)| (CowStr(text), end))
    }
}

impl<'de: 'a, 'a> Scan<'de> for OptCow<'a> {
    fn scan(value: crate::json_scan::Value<'de>) -> Option<(Self, usize)> {
        Option::<CowStr<'a>>::scan(value).map(|(text, end)| (OptCow(text.map(|text| text.0)), end))
    }
}

/// A string, `null`, or a count or boolean as its JSON text; any other
/// number is left to serde (its text is serde's to write).
impl<'de: 'a, 'a> Scan<'de> for ScalarText<'a> {
    fn scan(value: crate::json_scan::Value<'de>) -> Option<(Self, usize)> {
        if let Some((text, end)) = OptCow::scan(value) {
            return Some((ScalarText(text.0), end));
        }
        if let Some((count, end)) = value.count() {
            return Some((ScalarText(Some(Cow::Owned(count.to_string()))), end));
        }
        let (flag, end) = value.boolean()?;
        Some((ScalarText(Some(Cow::Borrowed(if flag { "true" } else { "false" }))), end))
    }
}

/// A list (its items raw) or a string; anything else is left to serde.
impl<'de: 'a, 'a> Scan<'de> for ListOr<'a> {
    fn scan(value: crate::json_scan::Value<'de>) -> Option<(Self, usize)> {
        if let Some((text, end)) = value.string() {
            return Some((ListOr::Text(text), end));
        }
        let mut items = smallvec::SmallVec::new();
        let end = value.array(|item| {
            let (text, end) = item.raw()?;
            items.push(Raw(text));
            Some(end)
        })?;
        Some((ListOr::List(items), end))
    }
}

impl<'de: 'a, 'a> Scan<'de> for Fields<'a> {
    fn scan(value: crate::json_scan::Value<'de>) -> Option<(Self, usize)> {
        let mut fields = Fields::default();
        let end = fields.scan_in(value)?;
        Some((fields, end))
    }
}

/// An object read as its fields; any other value noted as `Other`.
impl<'de: 'a, 'a> Present<'de> for FieldsOr<'a> {
    fn read_present<D: serde::Deserializer<'de>>(field: &mut Option<Self>, deserializer: D) -> Result<(), D::Error> {
        deserializer.deserialize_any(FieldsOrSlot(field))
    }

    fn scan_present(field: &mut Option<Self>, value: crate::json_scan::Value<'de>) -> Option<usize> {
        if !value.is_object() {
            let end = value.discard()?;
            *field = Some(FieldsOr::Other);
            return Some(end);
        }
        let FieldsOr::Fields(fields) = field.insert(FieldsOr::Fields(Fields::default())) else { return None };
        fields.scan_in(value)
    }
}

/// A view read in place as a seed, for `next_value_seed`, where the value
/// must be there (an object: `null` is an error, as it is to a derived
/// view).
pub(crate) struct Within<'s, V>(pub(crate) &'s mut V);

impl<'de, V: InPlace<'de>> serde::de::DeserializeSeed<'de> for Within<'_, V> {
    type Value = ();
    fn deserialize<D: serde::Deserializer<'de>>(self, deserializer: D) -> Result<(), D::Error> {
        self.0.read_in(deserializer)
    }
}

/// A field of views as a seed, for `next_value_seed`.
pub(crate) struct Field<'s, T>(pub(crate) &'s mut Option<T>);

impl<'de, T: Present<'de>> serde::de::DeserializeSeed<'de> for Field<'_, T> {
    type Value = ();
    fn deserialize<D: serde::Deserializer<'de>>(self, deserializer: D) -> Result<(), D::Error> {
        deserializer.deserialize_option(Optional(self.0))
    }
}

/// An optional field of views: `None` for `null`, else read in place.
struct Optional<'s, T>(&'s mut Option<T>);

impl<'de, T: Present<'de>> serde::de::Visitor<'de> for Optional<'_, T> {
    type Value = ();
    fn expecting(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("option")
    }
    fn visit_none<E>(self) -> Result<(), E> {
        *self.0 = None;
        Ok(())
    }
    fn visit_unit<E>(self) -> Result<(), E> {
        *self.0 = None;
        Ok(())
    }
    fn visit_some<D: serde::Deserializer<'de>>(self, deserializer: D) -> Result<(), D::Error> {
        T::read_present(self.0, deserializer)
    }
}

/// The items of a list of views.
struct Items<'s, V, const N: usize>(&'s mut smallvec::SmallVec<[V; N]>);

impl<'de, V: InPlace<'de>, const N: usize> serde::de::Visitor<'de> for Items<'_, V, N> {
    type Value = ();
    fn expecting(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("a sequence")
    }
    fn visit_seq<S: serde::de::SeqAccess<'de>>(self, mut seq: S) -> Result<(), S::Error> {
        while seq.next_element_seed(Item(&mut *self.0))?.is_some() {}
        Ok(())
    }
}

/// The next item of a list of views: pushed only once it is there.
struct Item<'s, V, const N: usize>(&'s mut smallvec::SmallVec<[V; N]>);

impl<'de, V: InPlace<'de>, const N: usize> serde::de::DeserializeSeed<'de> for Item<'_, V, N> {
    type Value = ();
    fn deserialize<D: serde::Deserializer<'de>>(self, deserializer: D) -> Result<(), D::Error> {
        self.0.push(V::default());
        match self.0.last_mut() {
            Some(view) => view.read_in(deserializer),
            None => Ok(()),
        }
    }
}

/// A value that may be a list, read in the one pass over its line: a
/// list's items raw (one item held inline), a string (borrowed unless it
/// has escapes), anything else as a value. For fields a format sends as a
/// list or as a string (a message's content), and for telling a list (or a
/// string) from anything else without reading the value a second time.
#[derive(Debug)]
pub(crate) enum ListOr<'a> {
    List(smallvec::SmallVec<[Raw<'a>; 1]>),
    Text(Cow<'a, str>),
    Other(Value),
}

impl<'a> ListOr<'a> {
    /// The value as it was sent.
    pub(crate) fn value(&self) -> Value {
        match self {
            ListOr::List(items) => Value::Array(items.iter().map(|raw| raw_value(*raw)).collect()),
            ListOr::Text(text) => Value::String(text.clone().into_owned()),
            ListOr::Other(value) => value.clone(),
        }
    }

    /// The value as text: a string's own, any other value's JSON.
    pub(crate) fn text(&self) -> Cow<'_, str> {
        match self {
            ListOr::Text(text) => Cow::Borrowed(text),
            other => Cow::Owned(other.value().to_string()),
        }
    }

    /// The string, when the value is one.
    pub(crate) fn into_string(self) -> Option<Cow<'a, str>> {
        match self {
            ListOr::Text(text) => Some(text),
            _ => None,
        }
    }
}

impl<'de: 'a, 'a> serde::Deserialize<'de> for ListOr<'a> {
    fn deserialize<D: serde::Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        struct Visit<'a>(std::marker::PhantomData<&'a ()>);
        impl<'de: 'a, 'a> serde::de::Visitor<'de> for Visit<'a> {
            type Value = ListOr<'a>;
            fn expecting(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
                f.write_str("any value")
            }
            fn visit_seq<S: serde::de::SeqAccess<'de>>(self, mut seq: S) -> Result<ListOr<'a>, S::Error> {
                let mut items = smallvec::SmallVec::new();
                while let Some(item) = seq.next_element::<Raw<'a>>()? {
                    items.push(item);
                }
                Ok(ListOr::List(items))
            }
            fn visit_borrowed_str<E>(self, text: &'de str) -> Result<ListOr<'a>, E> {
                Ok(ListOr::Text(Cow::Borrowed(text)))
            }
            fn visit_str<E>(self, text: &str) -> Result<ListOr<'a>, E> {
                Ok(ListOr::Text(Cow::Owned(text.to_owned())))
            }
            fn visit_string<E>(self, text: String) -> Result<ListOr<'a>, E> {
                Ok(ListOr::Text(Cow::Owned(text)))
            }
            fn visit_map<M: serde::de::MapAccess<'de>>(self, mut map: M) -> Result<ListOr<'a>, M::Error> {
                let mut object = serde_json::Map::new();
                while let Some((key, value)) = map.next_entry::<String, Value>()? {
                    object.insert(key, value);
                }
                Ok(ListOr::Other(Value::Object(object)))
            }
            fn visit_bool<E>(self, value: bool) -> Result<ListOr<'a>, E> {
                Ok(ListOr::Other(value.into()))
            }
            fn visit_i64<E>(self, value: i64) -> Result<ListOr<'a>, E> {
                Ok(ListOr::Other(value.into()))
            }
            fn visit_u64<E>(self, value: u64) -> Result<ListOr<'a>, E> {
                Ok(ListOr::Other(value.into()))
            }
            fn visit_f64<E>(self, value: f64) -> Result<ListOr<'a>, E> {
                Ok(ListOr::Other(value.into()))
            }
            fn visit_unit<E>(self) -> Result<ListOr<'a>, E> {
                Ok(ListOr::Other(Value::Null))
            }
        }
        deserializer.deserialize_any(Visit(std::marker::PhantomData))
    }
}

/// [`opt_cow`] as a type, for [`read_in_place!`].
pub(crate) struct OptCow<'a>(pub(crate) Option<Cow<'a, str>>);

impl<'de: 'a, 'a> serde::Deserialize<'de> for OptCow<'a> {
    fn deserialize<D: serde::Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        opt_cow(deserializer).map(OptCow)
    }
}

/// A string, borrowed unless it has escapes, for [`read_in_place!`] (what
/// `#[serde(borrow)]` reads into a bare `Cow<str>`).
#[derive(Debug, Default)]
pub(crate) struct CowStr<'a>(pub(crate) Cow<'a, str>);

impl<'de: 'a, 'a> serde::Deserialize<'de> for CowStr<'a> {
    fn deserialize<D: serde::Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        struct Visit<'a>(std::marker::PhantomData<&'a ()>);
        impl<'de: 'a, 'a> serde::de::Visitor<'de> for Visit<'a> {
            type Value = CowStr<'a>;
            fn expecting(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
                f.write_str("a string")
            }
            fn visit_borrowed_str<E>(self, v: &'de str) -> Result<CowStr<'a>, E> {
                Ok(CowStr(Cow::Borrowed(v)))
            }
            fn visit_str<E>(self, v: &str) -> Result<CowStr<'a>, E> {
                Ok(CowStr(Cow::Owned(v.to_owned())))
            }
            fn visit_string<E>(self, v: String) -> Result<CowStr<'a>, E> {
                Ok(CowStr(Cow::Owned(v)))
            }
        }
        deserializer.deserialize_str(Visit(std::marker::PhantomData))
    }
}

/// [`scalar_text`] as a type, for [`read_in_place!`].
pub(crate) struct ScalarText<'a>(pub(crate) Option<Cow<'a, str>>);

impl<'de: 'a, 'a> serde::Deserialize<'de> for ScalarText<'a> {
    fn deserialize<D: serde::Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        scalar_text(deserializer).map(ScalarText)
    }
}

/// A JSON value's text as it came in its line, checked as JSON when it was
/// read: what a view keeps of a value it passes on, or reads later.
/// serde_json's `&RawValue` is the same text, but only serde_json's own
/// reader can make one, so a value the scanner found ([`crate::json_scan`])
/// could not be kept as one without reading it a second time.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Raw<'a>(&'a str);

impl<'a> Raw<'a> {
    /// The value's JSON text.
    pub(crate) fn get(self) -> &'a str {
        self.0
    }

    /// Text known to be one JSON value: checked when it was first read,
    /// and found again where it was (a held record's field).
    pub(crate) fn checked(json: &'a str) -> Raw<'a> {
        Raw(json)
    }

    /// `json` when it is one JSON value (whitespace around it allowed, as
    /// serde keeps it in a raw value read alone).
    #[cfg(test)]
    pub(crate) fn of(json: &'a str) -> Raw<'a> {
        serde_json::from_str(json).expect("one JSON value")
    }
}

impl std::fmt::Display for Raw<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.0)
    }
}

impl<'de: 'a, 'a> serde::Deserialize<'de> for Raw<'a> {
    fn deserialize<D: serde::Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        <&'de RawValue>::deserialize(deserializer).map(|raw| Raw(raw.get()))
    }
}

/// A payload as text, validated once: decoding from text then needs no
/// second validation of each string or kept raw value.
pub(crate) fn utf8(payload: &[u8]) -> Result<&str, BadLine> {
    crate::utf8::from_utf8(payload).map_err(BadLine::not_utf8)
}

/// `raw` read as the view `T` (a struct or a list, never read from a
/// string), `None` when it does not fit. A string is refused before
/// serde_json reads it: the error would quote the whole string (a prompt, a
/// tool's output) escaped character by character, only to be dropped. On a
/// Claude Code transcript that was a fifth of a replay.
pub(crate) fn view_of<'a, T: serde::Deserialize<'a>>(raw: Raw<'a>) -> Option<T> {
    view_of_json(raw.get())
}

/// JSON text (a value already read once, such as a field's raw text) read
/// as the view `T`, as [`view_of`] reads a raw value.
pub(crate) fn view_of_json<'a, T: serde::Deserialize<'a>>(json: &'a str) -> Option<T> {
    if json.starts_with('"') {
        return None;
    }
    serde_json::from_str(json).ok()
}

/// A raw value as a `serde_json::Value`, for metadata ([`json_value`]).
pub(crate) fn raw_value(raw: Raw<'_>) -> Value {
    json_value(raw.get())
}

/// JSON text as a `serde_json::Value`. Valid JSON nested deeper than
/// serde_json builds values (128 levels) does not parse into one: it is
/// kept as its text, a string, rather than replaced or dropped.
pub(crate) fn json_value(json: &str) -> Value {
    // A string is decoded in one pass: most metadata (ids, model names,
    // timestamps) is a string, and the parser would scan it, then copy it
    // through a value visitor. One that does not decode (a lone surrogate,
    // a raw control character) is left to serde, which refuses it too.
    if let Some(text) = string_body(json).and_then(crate::json_scan::unescape) {
        return Value::String(text);
    }
    serde_json::from_str(json).unwrap_or_else(|_| Value::String(json.to_owned()))
}

/// What is between a JSON string's quotes, escapes and all; `None` for
/// text that is not between quotes.
pub(crate) fn string_body(json: &str) -> Option<&str> {
    json.strip_prefix('"')?.strip_suffix('"')
}

/// A value the protocol puts where text goes (arguments, raw output): a
/// string is its own text, anything else its JSON as sent.
pub(crate) fn raw_text(raw: Raw<'_>) -> Cow<'_, str> {
    json_as_text(raw.get())
}

/// The text of a JSON value, as [`raw_text`] gives a raw value's: `json`
/// must be valid JSON (a value read once already).
pub(crate) fn json_as_text(json: &str) -> Cow<'_, str> {
    json_decoded_string(json).unwrap_or(Cow::Borrowed(json))
}

/// [`raw_text`], with an escaped string decoded into `scratch` (a buffer
/// an adapter reuses from one event to the next) rather than into a new
/// string: a text fragment with a quote or a newline in it then costs no
/// allocation.
pub(crate) fn raw_text_in<'s>(raw: Raw<'s>, scratch: &'s mut String) -> &'s str {
    let json = raw.get();
    if let Some(inner) = string_body(json) {
        if !inner.contains('\\') {
            return inner;
        }
        scratch.clear();
        if crate::json_scan::unescape_into(inner, scratch).is_some() {
            return scratch;
        }
    }
    json
}

/// A raw value's text when it is a JSON string whose escapes decode (as
/// serde decodes a string: a lone surrogate does not); `None` for any
/// other value. Decoded in one pass, where reading it through serde would
/// scan it again and allocate twice.
pub(crate) fn decoded_string(raw: Raw<'_>) -> Option<Cow<'_, str>> {
    json_decoded_string(raw.get())
}

/// [`decoded_string`] of JSON text (a value read once already).
fn json_decoded_string(json: &str) -> Option<Cow<'_, str>> {
    decoded_body(string_body(json)?)
}

/// The text of a JSON string's body (what is between its quotes), its
/// escapes decoded: the body itself when it has no backslash (no parse,
/// and no error built to find out), `None` when it does not decode.
pub(crate) fn decoded_body(body: &str) -> Option<Cow<'_, str>> {
    if !body.contains('\\') {
        return Some(Cow::Borrowed(body));
    }
    crate::json_scan::unescape(body).map(Cow::Owned)
}

/// A raw value's text when it is a JSON string; `None` for any other
/// value.
pub(crate) fn raw_string(raw: Raw<'_>) -> Option<Cow<'_, str>> {
    json_string(raw.get())
}

/// The text of JSON text that is a string, as [`raw_string`] gives a raw
/// value's; `None` for any other value. `json` must be valid JSON (a
/// value read once already).
pub(crate) fn json_string(json: &str) -> Option<Cow<'_, str>> {
    json.starts_with('"').then(|| json_as_text(json))
}

/// An identifier as text: a string as it is, a number or a boolean as its
/// JSON text (an agent that numbers its tool calls is still understood),
/// `null` as none. Objects and arrays are not identifiers: an error.
pub(crate) fn scalar_text<'de, D: serde::Deserializer<'de>>(
    deserializer: D,
) -> Result<Option<Cow<'de, str>>, D::Error> {
    deserializer.deserialize_any(Text { scalars: true })
}

/// An optional string borrowed from the input when it has no escapes.
/// `#[serde(borrow)]` on an `Option<Cow<str>>` does not borrow (serde
/// borrows a bare `Cow<str>` only): every such field allocated, on every
/// event, until the adapters' views used this.
pub(crate) fn opt_cow<'de, D: serde::Deserializer<'de>>(deserializer: D) -> Result<Option<Cow<'de, str>>, D::Error> {
    deserializer.deserialize_option(Text { scalars: false })
}

/// The visitor of [`scalar_text`] and [`opt_cow`]: a string borrowed when
/// it can be, `null` as none, and (for identifiers) a number or a boolean
/// as its JSON text.
struct Text {
    scalars: bool,
}

impl<'de> serde::de::Visitor<'de> for Text {
    type Value = Option<Cow<'de, str>>;
    fn expecting(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(if self.scalars { "a string or a number" } else { "a string" })
    }
    fn visit_borrowed_str<E>(self, v: &'de str) -> Result<Self::Value, E> {
        Ok(Some(Cow::Borrowed(v)))
    }
    fn visit_str<E>(self, v: &str) -> Result<Self::Value, E> {
        Ok(Some(Cow::Owned(v.to_owned())))
    }
    fn visit_string<E>(self, v: String) -> Result<Self::Value, E> {
        Ok(Some(Cow::Owned(v)))
    }
    fn visit_u64<E: serde::de::Error>(self, v: u64) -> Result<Self::Value, E> {
        self.scalar(v.to_string(), serde::de::Unexpected::Unsigned(v))
    }
    fn visit_i64<E: serde::de::Error>(self, v: i64) -> Result<Self::Value, E> {
        self.scalar(v.to_string(), serde::de::Unexpected::Signed(v))
    }
    fn visit_f64<E: serde::de::Error>(self, v: f64) -> Result<Self::Value, E> {
        self.scalar(Value::from(v).to_string(), serde::de::Unexpected::Float(v))
    }
    fn visit_bool<E: serde::de::Error>(self, v: bool) -> Result<Self::Value, E> {
        self.scalar(v.to_string(), serde::de::Unexpected::Bool(v))
    }
    fn visit_unit<E>(self) -> Result<Self::Value, E> {
        Ok(None)
    }
    fn visit_none<E>(self) -> Result<Self::Value, E> {
        Ok(None)
    }
    fn visit_some<D: serde::Deserializer<'de>>(self, deserializer: D) -> Result<Self::Value, D::Error> {
        deserializer.deserialize_str(self)
    }
}

impl Text {
    /// A scalar that is not a string: its text for an identifier, else the
    /// error serde would give.
    fn scalar<E: serde::de::Error>(
        self,
        text: String,
        unexpected: serde::de::Unexpected<'_>,
    ) -> Result<Option<Cow<'static, str>>, E> {
        if self.scalars {
            Ok(Some(Cow::Owned(text)))
        } else {
            Err(E::invalid_type(unexpected, &self))
        }
    }
}

/// An object's fields in the order they came, borrowed from the input (keys
/// unless escaped, values as raw JSON): for objects whose keys are not
/// known in advance (extension metadata), or that may repeat a key (Codex's
/// items), which a derived struct rejects. [`Fields::get`] takes the last
/// value of a key, as a map would.
///
/// Eight fields are held inline: read in place ([`Fields::read_into`]),
/// an event's fields take no allocation and are not moved.
#[derive(Debug, Default)]
pub(crate) struct Fields<'a>(pub(crate) smallvec::SmallVec<[(Cow<'a, str>, Raw<'a>); 8]>);

impl<'a> Fields<'a> {
    /// Reads `text`, a JSON object, into `slot` (empty fields), as
    /// `serde_json::from_str` reads fields by value.
    pub(crate) fn read_into(text: &'a str, slot: &mut Fields<'a>) -> Result<(), serde_json::Error> {
        let held = slot.0.len();
        if scan_whole(text, |value| slot.scan_in(value)) {
            return Ok(());
        }
        slot.0.truncate(held);
        Self::read_by_serde(text, slot)
    }

    /// [`Fields::read_into`] for a raw value (checked as JSON when it was
    /// read, so the fields' values are measured rather than checked again).
    pub(crate) fn read_raw(raw: Raw<'a>, slot: &mut Fields<'a>) -> Result<(), serde_json::Error> {
        let held = slot.0.len();
        if scan_raw(raw, |value| slot.scan_in(value)) {
            return Ok(());
        }
        slot.0.truncate(held);
        Self::read_by_serde(raw.get(), slot)
    }

    fn read_by_serde(text: &'a str, slot: &mut Fields<'a>) -> Result<(), serde_json::Error> {
        let mut reader = serde_json::Deserializer::from_str(text);
        serde::de::DeserializeSeed::deserialize(FieldsSlot(slot), &mut reader).and_then(|()| reader.end())
    }

    /// Reads an object's fields through the scanner onto these; where the
    /// object ends, or `None` to leave it to serde.
    fn scan_in(&mut self, value: crate::json_scan::Value<'a>) -> Option<usize> {
        value.object(|key, value| {
            let (text, end) = value.raw()?;
            self.0.push((Cow::Borrowed(key), Raw(text)));
            Some(end)
        })
    }

    /// The last value of `key`.
    pub(crate) fn get(&self, key: &str) -> Option<Raw<'a>> {
        self.0.iter().rev().find(|(name, _)| name == key).map(|(_, value)| *value)
    }
}

impl<'de: 'a, 'a> serde::Deserialize<'de> for Fields<'a> {
    fn deserialize<D: serde::Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        let mut fields = Fields::default();
        serde::de::DeserializeSeed::deserialize(FieldsSlot(&mut fields), deserializer)?;
        Ok(fields)
    }
}

/// What a field of a view read in place holds when it is an object read
/// as its [`Fields`] in the view's own pass (`in place`), where reading it
/// raw and then as fields scanned it twice. Anything but an object (or
/// `null`, which leaves the field `None`) is noted as `Other`, not
/// refused: a reader that needs serde's words for what it is reads the
/// value again raw, alone.
#[derive(Debug)]
#[allow(clippy::large_enum_variant, reason = "the fields are inline so that reading them allocates nothing")]
pub(crate) enum FieldsOr<'a> {
    /// An object, its fields.
    Fields(Fields<'a>),
    /// A value of another kind.
    Other,
}

/// A [`FieldsOr`] field being read.
struct FieldsOrSlot<'s, 'a>(&'s mut Option<FieldsOr<'a>>);

impl FieldsOrSlot<'_, '_> {
    /// The value read is not an object.
    fn other<E>(self) -> Result<(), E> {
        *self.0 = Some(FieldsOr::Other);
        Ok(())
    }
}

impl<'de: 'a, 'a> serde::de::Visitor<'de> for FieldsOrSlot<'_, 'a> {
    type Value = ();
    fn expecting(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("any value")
    }
    fn visit_map<M: serde::de::MapAccess<'de>>(self, map: M) -> Result<(), M::Error> {
        let FieldsOr::Fields(fields) = self.0.insert(FieldsOr::Fields(Fields::default())) else { return Ok(()) };
        serde::de::Visitor::visit_map(FieldsSlot(fields), map)
    }
    fn visit_seq<S: serde::de::SeqAccess<'de>>(self, mut seq: S) -> Result<(), S::Error> {
        while seq.next_element::<serde::de::IgnoredAny>()?.is_some() {}
        self.other()
    }
    fn visit_bool<E>(self, _: bool) -> Result<(), E> {
        self.other()
    }
    fn visit_i64<E>(self, _: i64) -> Result<(), E> {
        self.other()
    }
    fn visit_u64<E>(self, _: u64) -> Result<(), E> {
        self.other()
    }
    fn visit_f64<E>(self, _: f64) -> Result<(), E> {
        self.other()
    }
    fn visit_str<E>(self, _: &str) -> Result<(), E> {
        self.other()
    }
    fn visit_unit<E>(self) -> Result<(), E> {
        *self.0 = None;
        Ok(())
    }
}

/// The raw value at a path of object keys in JSON text (the last of a key
/// written twice, as a map keeps it); `None` where a level is not an
/// object or lacks its key. For the rare reader that needs a value as it
/// was sent where the line's view kept only its fields ([`FieldsOr`]):
/// each level is read again as a field list.
pub(crate) fn raw_at<'a>(json: &'a str, keys: &[&str]) -> Option<Raw<'a>> {
    let mut found = None;
    let mut text = json;
    for key in keys {
        let mut fields = Fields::default();
        Fields::read_into(text, &mut fields).ok()?;
        let value = fields.get(key)?;
        text = value.get();
        found = Some(value);
    }
    found
}

/// Fields read into a slot.
struct FieldsSlot<'s, 'a>(&'s mut Fields<'a>);

impl<'de: 'a, 'a> serde::de::DeserializeSeed<'de> for FieldsSlot<'_, 'a> {
    type Value = ();
    fn deserialize<D: serde::Deserializer<'de>>(self, deserializer: D) -> Result<(), D::Error> {
        deserializer.deserialize_map(self)
    }
}

impl<'de: 'a, 'a> serde::de::Visitor<'de> for FieldsSlot<'_, 'a> {
    type Value = ();
    fn expecting(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("an object")
    }
    fn visit_map<M: serde::de::MapAccess<'de>>(self, mut map: M) -> Result<(), M::Error> {
        while let Some(Key(key)) = map.next_key::<Key<'a>>()? {
            let value: Raw<'a> = map.next_value()?;
            self.0 .0.push((key, value));
        }
        Ok(())
    }
}

/// An object key, borrowed unless it has escapes.
pub(crate) struct Key<'a>(pub(crate) Cow<'a, str>);

impl<'de: 'a, 'a> serde::Deserialize<'de> for Key<'a> {
    fn deserialize<D: serde::Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        struct Text<'a>(std::marker::PhantomData<&'a ()>);
        impl<'de: 'a, 'a> serde::de::Visitor<'de> for Text<'a> {
            type Value = Key<'a>;
            fn expecting(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
                f.write_str("a key")
            }
            fn visit_borrowed_str<E>(self, v: &'de str) -> Result<Key<'a>, E> {
                Ok(Key(Cow::Borrowed(v)))
            }
            fn visit_str<E>(self, v: &str) -> Result<Key<'a>, E> {
                Ok(Key(Cow::Owned(v.to_owned())))
            }
        }
        deserializer.deserialize_str(Text(std::marker::PhantomData))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A view read in place, and its derived twin: the two must read
    /// every input alike, errors included.
    #[derive(Debug, Default)]
    struct Flat<'a> {
        kind: Cow<'a, str>,
        name: Option<Cow<'a, str>>,
        id: Option<Cow<'a, str>>,
        count: Option<u64>,
        raw: Option<Raw<'a>>,
    }

    read_in_place!(Flat {
        "type" => kind as CowStr (required),
        "name" => name as OptCow,
        "id" => id as ScalarText,
        "count" => count,
        "raw" => raw,
    });

    #[derive(Debug, serde::Deserialize)]
    struct Derived<'a> {
        #[serde(borrow, rename = "type")]
        kind: Cow<'a, str>,
        #[serde(borrow, default, deserialize_with = "opt_cow")]
        name: Option<Cow<'a, str>>,
        #[serde(borrow, default, deserialize_with = "scalar_text")]
        id: Option<Cow<'a, str>>,
        #[serde(default)]
        count: Option<u64>,
        #[serde(borrow, default)]
        raw: Option<Raw<'a>>,
    }

    #[test]
    fn a_view_read_in_place_reads_as_its_derived_twin() {
        let inputs = [
            r#"{"type":"a","name":"n","id":7,"count":3,"raw":{"x":[1]},"other":[{"deep":true}]}"#,
            r#"{"type":"a\u00e9","name":null,"id":"i"}"#,
            r#"{"name":"no type"}"#,
            r#"{"type":"a","type":"b"}"#,
            r#"{"type":"a","count":"three"}"#,
            r#"{"type":"a","id":{"not":"scalar"}}"#,
            r#"{"type":5}"#,
            r#""a string""#,
            r#"{"type":"a"} trailing"#,
            r#"{"type":"a""#,
        ];
        for input in inputs {
            let mut slot = Flat::default();
            let read = Flat::read_into(input, &mut slot).map(|()| slot).map_err(|error| error.to_string());
            let derived = serde_json::from_str::<Derived<'_>>(input)
                .map_err(|error| error.to_string().replace("struct Derived", "struct Flat"));
            match (&read, &derived) {
                (Ok(read), Ok(derived)) => {
                    assert_eq!(read.kind, derived.kind, "{input}");
                    assert_eq!((&read.name, &read.id, read.count), (&derived.name, &derived.id, derived.count));
                    assert_eq!(read.raw.map(Raw::get), derived.raw.map(Raw::get), "{input}");
                    // Borrowed from the input wherever the derive borrows.
                    assert_eq!(matches!(read.kind, Cow::Borrowed(_)), matches!(derived.kind, Cow::Borrowed(_)));
                }
                (Err(read), Err(derived)) => assert_eq!(read, derived, "{input}"),
                _ => panic!("{input}: {read:?} against {derived:?}"),
            }
        }
        // Nested, by value: the same view.
        let nested: Vec<Flat<'_>> = serde_json::from_str(r#"[{"type":"a","count":1}]"#).unwrap();
        assert_eq!(nested[0].count, Some(1));
    }

    /// A view with another read in place inside it, and its derived twin.
    #[derive(Debug, Default)]
    struct Outer<'a> {
        inner: Option<Flat<'a>>,
        list: Option<smallvec::SmallVec<[Flat<'a>; 1]>>,
        after: Option<u64>,
    }

    read_in_place!(Outer {
        "inner" => inner in place,
        "list" => list in place,
        "after" => after,
    });

    #[derive(Debug, serde::Deserialize)]
    struct DerivedOuter<'a> {
        #[serde(borrow, default)]
        inner: Option<Derived<'a>>,
        #[serde(borrow, default)]
        list: Option<smallvec::SmallVec<[Derived<'a>; 1]>>,
        #[serde(default)]
        after: Option<u64>,
    }

    #[test]
    fn a_raw_value_is_found_at_its_path() {
        let json = r#"{"params":{"update":{"_meta":[1, {"a":2}],"x":1},"update":{"_meta":"last"}},"n":5}"#;
        assert_eq!(raw_at(json, &["n"]).map(Raw::get), Some("5"));
        assert_eq!(
            raw_at(json, &["params", "update", "_meta"]).map(Raw::get),
            Some(r#""last""#),
            "the last of a key twice"
        );
        assert_eq!(
            raw_at(r#"{"a":{"b":[1, {"c":2}]}}"#, &["a", "b"]).map(Raw::get),
            Some(r#"[1, {"c":2}]"#),
            "as sent"
        );
        assert!(raw_at(json, &["params", "missing"]).is_none());
        assert!(raw_at(json, &["n", "deeper"]).is_none(), "a level that is not an object");
        assert!(raw_at("[1]", &["a"]).is_none());
        assert!(raw_at(json, &[]).is_none());
    }

    /// A view whose `item` is read as fields in its own pass.
    #[derive(Debug, Default)]
    struct WithItem<'a> {
        item: Option<FieldsOr<'a>>,
        after: Option<u64>,
    }

    read_in_place!(WithItem { "item" => item in place, "after" => after });

    #[test]
    fn an_object_field_is_read_as_its_fields_and_anything_else_is_noted() {
        let read = |json: &'static str| {
            let mut view = WithItem::default();
            WithItem::read_into(json, &mut view).map(|()| view)
        };
        let view = read(r#"{"item":{"a":1,"b":{"c":[2]},"a":"x\"y"},"after":3}"#).unwrap();
        let Some(FieldsOr::Fields(fields)) = &view.item else { panic!("{view:?}") };
        let keys: Vec<(&str, &str)> = fields.0.iter().map(|(key, raw)| (key.as_ref(), raw.get())).collect();
        assert_eq!(keys, [("a", "1"), ("b", r#"{"c":[2]}"#), ("a", r#""x\"y""#)]);
        assert_eq!(fields.get("a").map(Raw::get), Some(r#""x\"y""#), "the last of a key twice");
        assert_eq!(view.after, Some(3), "the rest of the line is read after it");
        for other in ["5", "-1.5", "true", r#""text""#, "[1,{\"a\":2}]"] {
            let json: &'static str = Box::leak(format!(r#"{{"item":{other},"after":1}}"#).into_boxed_str());
            let view = read(json).unwrap();
            assert!(matches!(view.item, Some(FieldsOr::Other)), "{other}");
            assert_eq!(view.after, Some(1), "{other}");
        }
        assert!(read(r#"{"item":null}"#).unwrap().item.is_none());
        assert!(read(r#"{"after":1}"#).unwrap().item.is_none());
        let error = read(r#"{"item":{"a":1},"item":{}}"#).unwrap_err();
        assert_eq!(error.to_string(), "duplicate field `item` at line 1 column 22");
        assert!(read(r#"{"item":{"a":1}"#).is_err(), "truncated");
    }

    #[test]
    fn a_view_inside_a_view_reads_in_place_as_its_derived_twin() {
        let inputs = [
            r#"{"inner":{"type":"a","name":"n","id":7,"raw":[1]},"after":2}"#,
            r#"{"after":2,"inner":{"type":"b\"q"}}"#,
            r#"{"inner":null,"after":1}"#,
            r#"{}"#,
            r#"{"inner":{"name":"no type"}}"#,
            r#"{"inner":{"type":"a"},"inner":{"type":"b"}}"#,
            r#"{"inner":{"type":"a","type":"b"}}"#,
            r#"{"inner":5}"#,
            r#"{"inner":"text"}"#,
            r#"{"inner":{"type":"a"}"#,
            r#"{"list":[{"type":"a"},{"type":"b","count":2,"id":3}],"after":1}"#,
            r#"{"list":[]}"#,
            r#"{"list":null}"#,
            r#"{"list":{"type":"a"}}"#,
            r#"{"list":[{"name":"no type"}]}"#,
            r#"{"list":[{"type":"a"},5]}"#,
            r#"{"list":[{"type":"a"}],"list":[]}"#,
            r#"{"list":[{"type":"a"}"#,
        ];
        for input in inputs {
            let mut slot = Outer::default();
            let read = Outer::read_into(input, &mut slot).map(|()| slot).map_err(|error| error.to_string());
            let derived = serde_json::from_str::<DerivedOuter<'_>>(input).map_err(|error| {
                error
                    .to_string()
                    .replace("struct DerivedOuter", "struct Outer")
                    .replace("struct Derived", "struct Flat")
            });
            match (&read, &derived) {
                (Ok(read), Ok(derived)) => {
                    assert_eq!(read.after, derived.after, "{input}");
                    let items = |list: Option<&[Flat<'_>]>| {
                        list.map(|list| {
                            list.iter()
                                .map(|i| (i.kind.to_string(), i.count, i.id.as_deref().map(str::to_owned)))
                                .collect::<Vec<_>>()
                        })
                    };
                    let derived_items = |list: Option<&[Derived<'_>]>| {
                        list.map(|list| {
                            list.iter()
                                .map(|i| (i.kind.to_string(), i.count, i.id.as_deref().map(str::to_owned)))
                                .collect::<Vec<_>>()
                        })
                    };
                    assert_eq!(items(read.list.as_deref()), derived_items(derived.list.as_deref()), "{input}");
                    let (read, derived) = (read.inner.as_ref(), derived.inner.as_ref());
                    assert_eq!(read.map(|i| &i.kind), derived.map(|i| &i.kind), "{input}");
                    assert_eq!(read.map(|i| (&i.name, &i.id)), derived.map(|i| (&i.name, &i.id)), "{input}");
                    assert_eq!(read.and_then(|i| i.raw).map(Raw::get), derived.and_then(|i| i.raw).map(Raw::get));
                    let borrowed = |kind: Option<&Cow<'_, str>>| kind.map(|kind| matches!(kind, Cow::Borrowed(_)));
                    assert_eq!(borrowed(read.map(|i| &i.kind)), borrowed(derived.map(|i| &i.kind)), "{input}");
                }
                (Err(read), Err(derived)) => assert_eq!(read, derived, "{input}"),
                _ => panic!("{input}: {read:?} against {derived:?}"),
            }
        }
        // Where the derive read an array by position, a view in place
        // takes objects only.
        let mut slot = Outer::default();
        let error = Outer::read_into(r#"{"inner":[]}"#, &mut slot).unwrap_err().to_string();
        assert!(error.starts_with("invalid type: sequence, expected struct Flat"), "{error}");
    }

    #[test]
    fn json_value_reads_a_plain_string_as_the_parser_does() {
        for json in
            [r#""plain""#, r#""""#, r#""é ✓""#, r#""a\"b""#, r#""tab\tnew\n""#, r#""\u00e9""#, "\"raw\ttab\"", "\"open"]
        {
            let parsed = serde_json::from_str(json).unwrap_or_else(|_| Value::String(json.to_owned()));
            assert_eq!(json_value(json), parsed, "{json}");
        }
        assert_eq!(json_value(r#""a\"b""#), Value::String("a\"b".into()));
        assert_eq!(json_value("\"raw\ttab\""), Value::String("\"raw\ttab\"".into()));
    }

    #[test]
    fn raw_text_in_reads_as_raw_text_does_and_reuses_its_buffer() {
        let raw = |json: &'static str| Raw::of(json);
        let mut scratch = String::new();
        for json in [r#""plain""#, r#""a\nb \"q\" \u00e9""#, r#""""#, r#"[1, "x"]"#, "null", r#""\ud800""#, "12"] {
            let value = raw(json);
            assert_eq!(raw_text_in(value, &mut scratch), raw_text(value), "{json}");
        }
        let escaped = raw(r#""one\ttwo""#);
        assert_eq!(raw_text_in(escaped, &mut scratch), "one\ttwo");
        let capacity = scratch.capacity();
        let again = raw(r#""x\ny""#);
        assert_eq!(raw_text_in(again, &mut scratch), "x\ny");
        assert_eq!(scratch.capacity(), capacity, "the buffer is reused");
    }

    #[test]
    fn decoded_string_decodes_as_serde_reads_a_string() {
        let raw = |json: &'static str| Raw::of(json);
        for json in [
            r#""plain""#,
            r#""a\nb \"q\" \u00e9 \ud83d\ude00""#,
            r#""""#,
            r#""\ud800""#,
            r#""\udc00x""#,
            "12",
            "null",
            "[\"x\"]",
        ] {
            let serde = serde_json::from_str::<String>(json).ok();
            assert_eq!(decoded_string(raw(json)).map(Cow::into_owned), serde, "{json}");
        }
        assert!(matches!(decoded_string(raw(r#""plain""#)), Some(Cow::Borrowed("plain"))));
    }

    #[test]
    fn raw_text_borrows_plain_strings_and_unescapes_the_rest() {
        let raw = |json: &'static str| Raw::of(json);
        let plain = raw(r#""a.txt b.txt""#);
        assert!(matches!(raw_text(plain), Cow::Borrowed("a.txt b.txt")));
        let escaped = raw(r#""a\nb \"q\" \u00e9""#);
        assert_eq!(raw_text(escaped), "a\nb \"q\" é");
        assert!(matches!(raw_text(escaped), Cow::Owned(_)));
        assert_eq!(raw_text(raw(r#"{"k": [1, "x"]}"#)), r#"{"k": [1, "x"]}"#, "a structure is its JSON as sent");
        assert_eq!(raw_text(raw(r#""""#)), "");
    }

    #[test]
    fn a_view_is_read_from_what_fits_and_never_from_a_string() {
        let raw = |json: &'static str| Raw::of(json);
        let list = raw(r#"[1, "a", {"k": 2}]"#);
        let items: Vec<Raw<'_>> = view_of(list).unwrap();
        assert_eq!(items.iter().map(|i| i.get()).collect::<Vec<_>>(), ["1", r#""a""#, r#"{"k": 2}"#]);
        assert!(view_of::<Vec<Raw<'_>>>(raw(r#""[1, 2]""#)).is_none(), "a string, whatever it holds");
        assert!(view_of::<Vec<Raw<'_>>>(raw(r#"{"k": 1}"#)).is_none(), "another type");
        #[derive(serde::Deserialize)]
        struct View<'a> {
            #[serde(borrow)]
            k: &'a str,
        }
        let object = raw(r#"{"k": "v"}"#);
        assert_eq!(view_of::<View<'_>>(object).unwrap().k, "v");
        assert!(view_of::<View<'_>>(raw(r#""{\"k\": \"v\"}""#)).is_none());
    }
}
