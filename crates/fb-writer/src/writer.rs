//! [`LogWriter`]: frames messages onto any `io::Write`, one at a time.

use std::io::Write;

use fb_format::{TYPE_CHECKPOINT, TYPE_EOF, TYPE_FILEMAGIC, TYPE_HEADER, TYPE_REGULAR};
use fb_schema::{
    CaEvent, CaEventArgs, CbEvent, CbEventArgs, CheckpointInfo, CheckpointInfoArgs, DedupInfo,
    DedupInfoArgs, EpisodeEvent, EpisodeEventArgs, Event, EventArgs, EventEncoding, FileHeader,
    FileHeaderArgs, JoinedEvent, JoinedEventArgs, JoinedPayload, JoinedPayloadArgs, KeyValue,
    KeyValueArgs, Metadata, MetadataArgs, MultiSlotEvent, MultiSlotEventArgs, MultiStepEvent,
    MultiStepEventArgs, OutcomeEvent, SlotEvent, SlotEventArgs, TimeStamp,
};
use flatbuffers::{FlatBufferBuilder, WIPOffset};

use crate::error::{Error, Result};
use crate::spec::{CheckpointConfig, Encoding, JoinedEventSpec, PayloadSpec};

/// Default zstd level of compressed payloads.
pub const DEFAULT_ZSTD_LEVEL: i32 = 3;

/// Largest REGULAR payload a [`LogWriter`] builds by default: the
/// flatbuffers builder cannot grow past 2 GiB, less a margin for tables.
pub const MAX_MESSAGE_SIZE: usize = (1 << 31) - (1 << 20);

const ZEROS: [u8; 8] = [0; 8];

/// Where bytes go: the output and how much of it was written.
#[derive(Debug)]
struct Sink<W> {
    out: W,
    offset: u64,
    messages: u64,
}

impl<W: Write> Sink<W> {
    fn write(&mut self, bytes: &[u8]) -> Result<()> {
        self.out.write_all(bytes).map_err(|source| Error::Io {
            offset: self.offset,
            source,
        })?;
        self.offset += bytes.len() as u64;
        Ok(())
    }

    /// Type, size field, then `body` as given. Returns the message offset.
    fn raw_frame(&mut self, type_id: u32, size_field: u32, body: &[u8]) -> Result<u64> {
        let start = self.offset;
        let mut head = [0u8; 8];
        head[..4].copy_from_slice(&type_id.to_le_bytes());
        head[4..].copy_from_slice(&size_field.to_le_bytes());
        self.write(&head)?;
        self.write(body)?;
        self.messages += 1;
        Ok(start)
    }

    /// A well-formed message: size, payload, `size % 8` zero bytes.
    fn message(&mut self, type_id: u32, payload: &[u8], what: &'static str) -> Result<u64> {
        let size = u32::try_from(payload.len()).map_err(|_| Error::TooLarge {
            what,
            size: payload.len() as u64,
        })?;
        let start = self.raw_frame(type_id, size, payload)?;
        // size % 8 < 8 = ZEROS.len()
        self.write(ZEROS.get(..(size % 8) as usize).unwrap_or_default())?;
        Ok(start)
    }
}

/// Writes a joined binary log message by message.
///
/// Every method that writes returns the byte offset at which its message
/// starts. Events of a REGULAR message are collected with
/// [`LogWriter::push_event`] and written by [`LogWriter::end_regular`];
/// [`LogWriter::regular`] does both. Two `FlatBufferBuilder`s are reused
/// for the whole log (one for the message being assembled, one for each
/// event's nested buffers), so memory is bounded by the largest message.
///
/// Messages go straight to the output: wrap files in a `BufWriter`.
pub struct LogWriter<W: Write> {
    sink: Sink<W>,
    /// The REGULAR message being assembled.
    msg: FlatBufferBuilder<'static>,
    pending: Vec<WIPOffset<JoinedEvent<'static>>>,
    /// Nested buffers of one event (typed payload, then the `Event`).
    scratch: FlatBufferBuilder<'static>,
    payload: Vec<u8>,
    slots: Vec<WIPOffset<SlotEvent<'static>>>,
    strings: Vec<WIPOffset<&'static str>>,
    key_values: Vec<WIPOffset<KeyValue<'static>>>,
    zstd: Option<zstd::bulk::Compressor<'static>>,
    zstd_level: i32,
    max_message: usize,
}

impl<W: Write> std::fmt::Debug for LogWriter<W> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("LogWriter")
            .field("offset", &self.sink.offset)
            .field("messages", &self.sink.messages)
            .field("pending_events", &self.pending.len())
            .field("zstd_level", &self.zstd_level)
            .finish_non_exhaustive()
    }
}

/// A whole log of one batch: FILEMAGIC, a CHECKPOINT of `config`, one
/// REGULAR message holding `events`, EOF. What most hand-made test logs
/// are.
pub fn one_batch_log(config: &CheckpointConfig, events: &[JoinedEventSpec<'_>]) -> Result<Vec<u8>> {
    let mut w = LogWriter::new(Vec::new());
    w.file_magic(1)?;
    w.checkpoint(config)?;
    w.regular(events)?;
    w.eof()?;
    Ok(w.into_inner())
}

impl<W: Write> LogWriter<W> {
    /// A writer at byte 0 of `out`.
    pub fn new(out: W) -> Self {
        Self {
            sink: Sink {
                out,
                offset: 0,
                messages: 0,
            },
            msg: FlatBufferBuilder::with_capacity(4096),
            pending: Vec::new(),
            scratch: FlatBufferBuilder::with_capacity(4096),
            payload: Vec::new(),
            slots: Vec::new(),
            strings: Vec::new(),
            key_values: Vec::new(),
            zstd: None,
            zstd_level: DEFAULT_ZSTD_LEVEL,
            max_message: MAX_MESSAGE_SIZE,
        }
    }

    /// Refuses ([`Error::TooLarge`]) REGULAR payloads above `bytes`, and
    /// events above half of it, instead of building them. Capped at
    /// [`MAX_MESSAGE_SIZE`], the default.
    pub fn with_max_message_size(mut self, bytes: usize) -> Self {
        self.max_message = bytes.min(MAX_MESSAGE_SIZE);
        self
    }

    /// Bytes written so far: the offset of the next message.
    pub fn offset(&self) -> u64 {
        self.sink.offset
    }

    /// Messages written so far: the index of the next message.
    pub fn messages_written(&self) -> u64 {
        self.sink.messages
    }

    /// Events pushed for the REGULAR message not yet written.
    pub fn pending_events(&self) -> usize {
        self.pending.len()
    }

    /// The output.
    pub fn get_ref(&self) -> &W {
        &self.sink.out
    }

    /// Flushes the output.
    pub fn flush(&mut self) -> Result<()> {
        self.sink.out.flush().map_err(|source| Error::Io {
            offset: self.sink.offset,
            source,
        })
    }

    /// Gives the output back (pending events are dropped; not flushed).
    pub fn into_inner(self) -> W {
        self.sink.out
    }

    /// FILEMAGIC with the inline format `version` (1 is the only valid one).
    pub fn file_magic(&mut self, version: u32) -> Result<u64> {
        self.sink.raw_frame(TYPE_FILEMAGIC, version, &[])
    }

    /// A HEADER: `FileHeader` with these properties and join time.
    pub fn header(&mut self, properties: &[(&str, &str)], join_time: TimeStamp) -> Result<u64> {
        let fbb = &mut self.scratch;
        fbb.reset();
        self.key_values.clear();
        for (key, value) in properties {
            let key = fbb.create_string(key);
            let value = fbb.create_string(value);
            self.key_values.push(KeyValue::create(
                fbb,
                &KeyValueArgs {
                    key: Some(key),
                    value: Some(value),
                },
            ));
        }
        let properties = fbb.create_vector(&self.key_values);
        let root = FileHeader::create(
            fbb,
            &FileHeaderArgs {
                join_time: Some(&join_time),
                properties: Some(properties),
            },
        );
        fbb.finish_minimal(root);
        self.sink
            .message(TYPE_HEADER, fbb.finished_data(), "HEADER payload")
    }

    /// A CHECKPOINT: `CheckpointInfo` with these settings.
    pub fn checkpoint(&mut self, config: &CheckpointConfig) -> Result<u64> {
        let fbb = &mut self.scratch;
        fbb.reset();
        let root = CheckpointInfo::create(
            fbb,
            &CheckpointInfoArgs {
                reward_function_type: config.reward_function,
                default_reward: config.default_reward,
                learning_mode_config: config.learning_mode,
                problem_type_config: config.problem_type,
                use_client_time: config.use_client_time,
            },
        );
        fbb.finish_minimal(root);
        self.sink
            .message(TYPE_CHECKPOINT, fbb.finished_data(), "CHECKPOINT payload")
    }

    /// A REGULAR message holding `events`, in order (after any pushed
    /// with [`LogWriter::push_event`]).
    pub fn regular(&mut self, events: &[JoinedEventSpec<'_>]) -> Result<u64> {
        for event in events {
            self.push_event(event)?;
        }
        self.end_regular()
    }

    /// Adds one event to the REGULAR message being assembled.
    pub fn push_event(&mut self, spec: &JoinedEventSpec<'_>) -> Result<()> {
        let meta = &spec.meta;
        let max_event = self.max_message / 2;
        let estimate = payload_size(&spec.payload)
            .saturating_add(str_len(meta.id))
            .saturating_add(str_len(meta.app_id));
        if estimate > max_event {
            return Err(Error::TooLarge {
                what: "event",
                size: estimate as u64,
            });
        }
        // 1. The typed payload, into `self.payload` (compressed or not).
        let raw: &[u8] = match &spec.payload {
            PayloadSpec::Raw { bytes, .. } => bytes,
            typed => {
                self.scratch.reset();
                build_payload(&mut self.scratch, typed, &mut self.slots, &mut self.strings);
                self.scratch.finished_data()
            }
        };
        self.payload.clear();
        match meta.encoding {
            Encoding::Identity | Encoding::ClaimsZstd => self.payload.extend_from_slice(raw),
            Encoding::Zstd => {
                let fail = |source| Error::Compress {
                    event_id: meta.id.unwrap_or_default().to_string(),
                    source,
                };
                let zstd = match &mut self.zstd {
                    Some(zstd) => zstd,
                    slot => {
                        slot.insert(zstd::bulk::Compressor::new(self.zstd_level).map_err(fail)?)
                    }
                };
                self.payload
                    .reserve(zstd::zstd_safe::compress_bound(raw.len()));
                zstd.compress_to_buffer(raw, &mut self.payload)
                    .map_err(fail)?;
            }
        }
        if self.payload.len() > max_event {
            return Err(Error::TooLarge {
                what: "event payload",
                size: self.payload.len() as u64,
            });
        }
        // 2. The `Event` around it.
        let fbb = &mut self.scratch;
        fbb.reset();
        let payload = fbb.create_vector(&self.payload);
        let id = meta.id.map(|id| fbb.create_string(id));
        let app_id = meta.app_id.map(|app| fbb.create_string(app));
        let encoding = match meta.encoding {
            Encoding::Identity => EventEncoding::Identity,
            Encoding::Zstd | Encoding::ClaimsZstd => EventEncoding::Zstd,
        };
        let metadata = Metadata::create(
            fbb,
            &MetadataArgs {
                id,
                client_time_utc: meta.client_time.as_ref(),
                app_id,
                payload_type: meta
                    .payload_type
                    .unwrap_or_else(|| spec.payload.payload_type()),
                pass_probability: meta.pass_probability,
                encoding,
            },
        );
        let root = Event::create(
            fbb,
            &EventArgs {
                meta: Some(metadata),
                payload: Some(payload),
            },
        );
        fbb.finish_minimal(root);
        // 3. The `JoinedEvent` in the message.
        let event_bytes = self.scratch.finished_data();
        let message = self.msg.unfinished_data().len() + event_bytes.len() + 64;
        if message > self.max_message {
            return Err(Error::TooLarge {
                what: "REGULAR payload",
                size: message as u64,
            });
        }
        let event = self.msg.create_vector(event_bytes);
        self.pending.push(JoinedEvent::create(
            &mut self.msg,
            &JoinedEventArgs {
                event: Some(event),
                timestamp: Some(&spec.enqueued),
            },
        ));
        Ok(())
    }

    /// Adds a `JoinedEvent` with these raw `event` bytes (any bytes, not
    /// necessarily an `Event` flatbuffer); `None` leaves a field out.
    pub fn push_raw_event(
        &mut self,
        event: Option<&[u8]>,
        enqueued: Option<TimeStamp>,
    ) -> Result<()> {
        let len = event.map_or(0, <[u8]>::len);
        let message = self.msg.unfinished_data().len().saturating_add(len) + 64;
        if message > self.max_message {
            return Err(Error::TooLarge {
                what: "REGULAR payload",
                size: message as u64,
            });
        }
        let event = event.map(|bytes| self.msg.create_vector(bytes));
        self.pending.push(JoinedEvent::create(
            &mut self.msg,
            &JoinedEventArgs {
                event,
                timestamp: enqueued.as_ref(),
            },
        ));
        Ok(())
    }

    /// Writes the REGULAR message of the pushed events (none is valid: an
    /// empty `events` vector) and starts a new one.
    pub fn end_regular(&mut self) -> Result<u64> {
        let events = self.msg.create_vector(&self.pending);
        let root = JoinedPayload::create(
            &mut self.msg,
            &JoinedPayloadArgs {
                events: Some(events),
            },
        );
        self.msg.finish_minimal(root);
        let written = self
            .sink
            .message(TYPE_REGULAR, self.msg.finished_data(), "REGULAR payload");
        self.msg.reset();
        self.pending.clear();
        written
    }

    /// An EOF message (size 0).
    pub fn eof(&mut self) -> Result<u64> {
        self.sink.raw_frame(TYPE_EOF, 0, &[])
    }

    /// A message of any type with this payload, framed correctly (size
    /// field, payload, `size % 8` zero bytes): e.g. an unknown type.
    pub fn message(&mut self, type_id: u32, payload: &[u8]) -> Result<u64> {
        self.sink.message(type_id, payload, "payload")
    }

    /// Type and size fields as given, then `body` and nothing else: no
    /// check, no padding. For bad magics and lying size fields.
    pub fn raw_frame(&mut self, type_id: u32, size_field: u32, body: &[u8]) -> Result<u64> {
        self.sink.raw_frame(type_id, size_field, body)
    }

    /// Bytes as given, outside any framing (counted as no message).
    pub fn raw_bytes(&mut self, bytes: &[u8]) -> Result<u64> {
        let start = self.sink.offset;
        self.sink.write(bytes)?;
        Ok(start)
    }
}

fn str_len(s: Option<&str>) -> usize {
    s.map_or(0, str::len)
}

fn slice_size<T>(v: Option<&[T]>) -> usize {
    v.map_or(0, std::mem::size_of_val)
}

fn union_size<N>(arg: &fb_schema::UnionArg<'_, N>) -> usize {
    match arg {
        fb_schema::UnionArg::Literal(s) => s.len(),
        _ => 0,
    }
}

/// Bytes a typed payload takes at least: its vectors and strings.
fn payload_size(spec: &PayloadSpec<'_>) -> usize {
    let sum = |parts: &[usize]| parts.iter().fold(0usize, |a, b| a.saturating_add(*b));
    match spec {
        PayloadSpec::Cb(cb) => sum(&[
            slice_size(cb.action_ids),
            slice_size(cb.context),
            slice_size(cb.probabilities),
            str_len(cb.model_id),
        ]),
        PayloadSpec::Ccb(ms) | PayloadSpec::Slates(ms) => {
            let slots = ms.slots.unwrap_or_default().iter().fold(0usize, |a, s| {
                a.saturating_add(sum(&[
                    std::mem::size_of_val(s.action_ids),
                    std::mem::size_of_val(s.probabilities),
                    str_len(s.id),
                ]))
            });
            sum(&[
                slice_size(ms.context),
                slots,
                slice_size(ms.baseline_actions),
                str_len(ms.model_id),
            ])
        }
        PayloadSpec::Ca(ca) => sum(&[slice_size(ca.context), str_len(ca.model_id)]),
        PayloadSpec::Outcome(o) => sum(&[union_size(&o.value), union_size(&o.index)]),
        PayloadSpec::Dedup(d) => d.values.iter().fold(std::mem::size_of_val(d.ids), |a, v| {
            a.saturating_add(v.len())
        }),
        PayloadSpec::MultiStep(st) => sum(&[
            str_len(st.event_id),
            str_len(st.previous_id),
            slice_size(st.action_ids),
            slice_size(st.context),
            slice_size(st.probabilities),
            str_len(st.model_id),
        ]),
        PayloadSpec::Episode { episode_id } => str_len(*episode_id),
        PayloadSpec::Raw { bytes, .. } => bytes.len(),
    }
}

fn opt_str(
    fbb: &mut FlatBufferBuilder<'static>,
    s: Option<&str>,
) -> Option<WIPOffset<&'static str>> {
    s.map(|s| fbb.create_string(s))
}

/// Serializes a typed payload into `fbb` and finishes it. `Raw` payloads
/// are not built here.
fn build_payload(
    fbb: &mut FlatBufferBuilder<'static>,
    spec: &PayloadSpec<'_>,
    slots: &mut Vec<WIPOffset<SlotEvent<'static>>>,
    strings: &mut Vec<WIPOffset<&'static str>>,
) {
    match spec {
        PayloadSpec::Cb(cb) => {
            let action_ids = cb.action_ids.map(|v| fbb.create_vector(v));
            let context = cb.context.map(|v| fbb.create_vector(v));
            let probabilities = cb.probabilities.map(|v| fbb.create_vector(v));
            let model_id = opt_str(fbb, cb.model_id);
            let root = CbEvent::create(
                fbb,
                &CbEventArgs {
                    deferred_action: cb.deferred_action,
                    action_ids,
                    context,
                    probabilities,
                    model_id,
                    learning_mode: cb.learning_mode,
                },
            );
            fbb.finish_minimal(root);
        }
        PayloadSpec::Ccb(ms) | PayloadSpec::Slates(ms) => {
            let context = ms.context.map(|v| fbb.create_vector(v));
            let slot_list = ms.slots.map(|list| {
                slots.clear();
                for slot in list {
                    let action_ids = fbb.create_vector(slot.action_ids);
                    let probabilities = fbb.create_vector(slot.probabilities);
                    let id = opt_str(fbb, slot.id);
                    slots.push(SlotEvent::create(
                        fbb,
                        &SlotEventArgs {
                            action_ids: Some(action_ids),
                            probabilities: Some(probabilities),
                            id,
                        },
                    ));
                }
                fbb.create_vector(slots)
            });
            let model_id = opt_str(fbb, ms.model_id);
            let baseline_actions = ms.baseline_actions.map(|v| fbb.create_vector(v));
            let root = MultiSlotEvent::create(
                fbb,
                &MultiSlotEventArgs {
                    context,
                    slots: slot_list,
                    model_id,
                    deferred_action: ms.deferred_action,
                    baseline_actions,
                    learning_mode: ms.learning_mode,
                },
            );
            fbb.finish_minimal(root);
        }
        PayloadSpec::Ca(ca) => {
            let context = ca.context.map(|v| fbb.create_vector(v));
            let model_id = opt_str(fbb, ca.model_id);
            let root = CaEvent::create(
                fbb,
                &CaEventArgs {
                    deferred_action: ca.deferred_action,
                    action: ca.action,
                    context,
                    pdf_value: ca.pdf_value,
                    model_id,
                    learning_mode: ca.learning_mode,
                },
            );
            fbb.finish_minimal(root);
        }
        PayloadSpec::Outcome(args) => {
            let root = OutcomeEvent::create(fbb, args);
            fbb.finish_minimal(root);
        }
        PayloadSpec::Dedup(dedup) => {
            let ids = fbb.create_vector(dedup.ids);
            strings.clear();
            for value in dedup.values {
                strings.push(fbb.create_string(value));
            }
            let values = fbb.create_vector(strings);
            let root = DedupInfo::create(
                fbb,
                &DedupInfoArgs {
                    ids: Some(ids),
                    values: Some(values),
                },
            );
            fbb.finish_minimal(root);
        }
        PayloadSpec::MultiStep(step) => {
            let event_id = opt_str(fbb, step.event_id);
            let previous_id = opt_str(fbb, step.previous_id);
            let action_ids = step.action_ids.map(|v| fbb.create_vector(v));
            let context = step.context.map(|v| fbb.create_vector(v));
            let probabilities = step.probabilities.map(|v| fbb.create_vector(v));
            let model_id = opt_str(fbb, step.model_id);
            let root = MultiStepEvent::create(
                fbb,
                &MultiStepEventArgs {
                    event_id,
                    previous_id,
                    action_ids,
                    context,
                    probabilities,
                    model_id,
                    deferred_action: step.deferred_action,
                },
            );
            fbb.finish_minimal(root);
        }
        PayloadSpec::Episode { episode_id } => {
            let episode_id = opt_str(fbb, *episode_id);
            let root = EpisodeEvent::create(fbb, &EpisodeEventArgs { episode_id });
            fbb.finish_minimal(root);
        }
        PayloadSpec::Raw { .. } => {}
    }
}
