#!/usr/bin/python3
"""Independent check of the fake trainer's TensorBoard event files.

Runs fake-trainer locally (no Slurm), then decodes its event file with
Debian's python3-protobuf and python3-crc32c, not with jobmon's reader: the
TFRecord framing (u64 length, masked CRC-32C of the length, payload, masked
CRC-32C of the payload) and the Event/Summary messages are rebuilt here from
TensorBoard's published field numbers.
"""
import argparse
import glob
import os
import struct
import subprocess
import sys
import tempfile

import crc32c
from google.protobuf import descriptor_pb2, descriptor_pool, message_factory

F = descriptor_pb2.FieldDescriptorProto


def build_event_class():
    """Event/Summary/Value with tensorflow's field numbers (event.proto, summary.proto)."""
    fdp = descriptor_pb2.FileDescriptorProto(name="independent_event.proto", package="check",
                                             syntax="proto3")
    summary = fdp.message_type.add(name="Summary")
    value = summary.nested_type.add(name="Value")
    value.field.add(name="tag", number=1, type=F.TYPE_STRING, label=F.LABEL_OPTIONAL)
    value.field.add(name="simple_value", number=2, type=F.TYPE_FLOAT, label=F.LABEL_OPTIONAL)
    summary.field.add(name="value", number=1, type=F.TYPE_MESSAGE, label=F.LABEL_REPEATED,
                      type_name=".check.Summary.Value")
    event = fdp.message_type.add(name="Event")
    event.field.add(name="wall_time", number=1, type=F.TYPE_DOUBLE, label=F.LABEL_OPTIONAL)
    event.field.add(name="step", number=2, type=F.TYPE_INT64, label=F.LABEL_OPTIONAL)
    event.field.add(name="file_version", number=3, type=F.TYPE_STRING, label=F.LABEL_OPTIONAL)
    event.field.add(name="summary", number=5, type=F.TYPE_MESSAGE, label=F.LABEL_OPTIONAL,
                    type_name=".check.Summary")
    pool = descriptor_pool.DescriptorPool()
    pool.Add(fdp)
    descriptor = pool.FindMessageTypeByName("check.Event")
    if hasattr(message_factory, "GetMessageClass"):
        return message_factory.GetMessageClass(descriptor)
    return message_factory.MessageFactory(pool).GetPrototype(descriptor)


def masked(data):
    crc = crc32c.crc32c(data)
    return ((((crc >> 15) | (crc << 17)) & 0xFFFFFFFF) + 0xA282EAD8) & 0xFFFFFFFF


def read_records(path):
    with open(path, "rb") as f:
        data = f.read()
    offset, records = 0, []
    while offset < len(data):
        header = data[offset:offset + 12]
        assert len(header) == 12, f"truncated header at {offset}"
        (length,) = struct.unpack("<Q", header[:8])
        (length_crc,) = struct.unpack("<I", header[8:])
        assert masked(header[:8]) == length_crc, f"bad length CRC at {offset}"
        payload = data[offset + 12:offset + 12 + length]
        (payload_crc,) = struct.unpack("<I", data[offset + 12 + length:offset + 16 + length])
        assert masked(payload) == payload_crc, f"bad payload CRC at {offset}"
        records.append(payload)
        offset += 16 + length
    return records


def main():
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--fake-trainer", required=True)
    args = parser.parse_args()
    Event = build_event_class()
    steps = 6
    with tempfile.TemporaryDirectory() as tmp:
        tb = os.path.join(tmp, "tb")
        os.mkdir(tb)
        run = subprocess.run([args.fake_trainer, "--steps", str(steps), "--step-seconds", "0.01",
                              "--tensorboard-dir", tb, "--host", "nodeX", "--seed", "3"],
                             capture_output=True, text=True, timeout=60)
        assert run.returncode == 0, run.stdout + run.stderr
        logged = {}
        for line in run.stdout.splitlines():
            if line.startswith("completed step: "):
                fields = dict(part.split(": ", 1) for part in line.split(", "))
                logged[int(fields["completed step"])] = float(fields["loss"])
        files = glob.glob(os.path.join(tb, "events.out.tfevents.*.nodeX"))
        assert len(files) == 1, files
        records = read_records(files[0])
        events = [Event.FromString(r) for r in records]
        assert events[0].file_version == "brain.Event:2", events[0]
        seen = {}
        for event in events[1:]:
            tags = {v.tag: v.simple_value for v in event.summary.value}
            assert set(tags) == {"learning/loss", "learning/grad_norm", "learning/raw_grad_norm",
                                 "learning/param_norm", "learning/current_learning_rate",
                                 "learning/total_weights", "perf/step_time_seconds",
                                 "perf/per_device_tflops", "perf/per_device_tokens_per_sec"}, tags
            assert tags["perf/step_time_seconds"] > 0
            assert event.wall_time > 1.6e9
            seen[event.step] = tags["learning/loss"]
        assert sorted(seen) == list(range(steps)), sorted(seen)
        for step, loss in seen.items():
            assert abs(loss - logged[step]) < 0.0006, (step, loss, logged[step])
    print(f"independent decoder: {len(records)} records, steps 0..{steps - 1}, "
          f"CRCs and losses match the log")
    return 0


if __name__ == "__main__":
    sys.exit(main())
