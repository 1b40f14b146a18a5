#!/usr/bin/python3
"""A Telegram Bot API stub on loopback that checks requests the way the
documented API does (https://core.telegram.org/bots/api):

- /bot<TOKEN>/<method>; another token: 401 Unauthorized.
- sendMessage: chat_id and text required; parse_mode=HTML text must parse
  (only the documented tags, balanced; & < > only as entities, else
  400 "can't parse entities"); at most 4096 characters after entity parsing
  (UTF-16 code units), else 400 "message is too long"; message_thread_id
  must be an integer.
- reply_parameters (sendMessage, sendPhoto, sendDocument; a JSON object,
  serialized in a multipart field): message_id must be an integer; a
  message_id the bot did not send to that chat: 400 "message to be replied
  not found" unless allow_sending_without_reply is true.
- Every sent message gets the chat's next message_id (logged as message_id;
  a reply as reply_to).
- sendDocument: multipart/form-data with a file part `document` (with a
  filename), else 400 "there is no document in the request".
- sendPhoto: multipart/form-data with a file part `photo` that is an
  image (the stub reads PNG only), at most 10 MB, width + height at most
  10000 and a width/height ratio at most 20, else 400 "PHOTO_INVALID_DIMENSIONS"
  (or "there is no photo in the request"); caption at most 1024 characters.
- Flood control: a second request to one chat within --flood-seconds gets
  429 with parameters.retry_after (every --flood-every-th time).

Accepted calls are written as JSON lines to --log, rejected ones too
(with "rejected": reason).
"""
import argparse
import email
import email.policy
import html
import http.server
import json
import re
import threading
import time
import urllib.parse

ALLOWED = {"b", "strong", "i", "em", "u", "ins", "s", "strike", "del", "a", "code", "pre",
           "tg-spoiler", "span", "blockquote", "tg-emoji"}
ENTITY = re.compile(r"&(lt|gt|amp|quot|#[0-9]+|#x[0-9a-fA-F]+);")
TAG = re.compile(r"<(/?)([a-z-]+)((?:\s+[a-z-]+=\"[^\"]*\")*)\s*>")


def parse_html(text):
    """The visible text, or raises ValueError as the API would."""
    out, stack, i = [], [], 0
    while i < len(text):
        c = text[i]
        if c == "<":
            m = TAG.match(text, i)
            if not m or m.group(2) not in ALLOWED:
                raise ValueError(f"can't parse entities: Unsupported start tag at byte offset {i}")
            if m.group(1):
                if not stack or stack[-1] != m.group(2):
                    raise ValueError(f"can't parse entities: Unmatched end tag at byte offset {i}")
                stack.pop()
            else:
                stack.append(m.group(2))
            i = m.end()
        elif c == "&":
            m = ENTITY.match(text, i)
            if not m:
                raise ValueError(f"can't parse entities: Character '&' is reserved at byte offset {i}")
            out.append(html.unescape(m.group(0)))
            i = m.end()
        elif c == ">":
            raise ValueError(f"can't parse entities: Character '>' is reserved at byte offset {i}")
        else:
            out.append(c)
            i += 1
    if stack:
        raise ValueError(f"can't parse entities: Can't find end tag corresponding to start tag {stack[-1]}")
    return "".join(out)


def utf16_len(s):
    return len(s.encode("utf-16-le")) // 2


def png_size(data):
    """(width, height) of a PNG (its IHDR chunk), or None."""
    if len(data) < 24 or data[:8] != b"\x89PNG\r\n\x1a\n" or data[12:16] != b"IHDR":
        return None
    return int.from_bytes(data[16:20], "big"), int.from_bytes(data[20:24], "big")


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--port", type=int, required=True)
    ap.add_argument("--token", required=True)
    ap.add_argument("--log", required=True)
    ap.add_argument("--flood-seconds", type=float, default=0.3)
    ap.add_argument("--flood-every", type=int, default=3, help="429 on every n-th too-fast request")
    args = ap.parse_args()
    lock = threading.Lock()
    last_call = {}
    too_fast = [0]
    sent = {}  # chat -> the message ids sent to it

    class Handler(http.server.BaseHTTPRequestHandler):
        def sent_ok(self, record):
            """200 with the chat's next message id."""
            with lock:
                ids = sent.setdefault(record["chat_id"], set())
                record["message_id"] = len(ids) + 1
                ids.add(record["message_id"])
            self.reply(200, {"ok": True, "result": {"message_id": record["message_id"]}}, record)

        def reply(self, status, body, record):
            with lock:
                with open(args.log, "a") as f:
                    f.write(json.dumps(record) + "\n")
            data = json.dumps(body).encode()
            self.send_response(status)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(data)))
            self.end_headers()
            self.wfile.write(data)

        def fail(self, status, description, record, **extra):
            record["rejected"] = description
            body = {"ok": False, "error_code": status, "description": description}
            body.update(extra)
            self.reply(status, body, record)

        def do_POST(self):
            m = re.fullmatch(r"/bot([^/]+)/(\w+)", self.path)
            record = {"method": m.group(2) if m else self.path, "at": time.time()}
            if not m or m.group(1) != args.token:
                return self.fail(401, "Unauthorized", record)
            length = int(self.headers.get("Content-Length", "0"))
            raw = self.rfile.read(length)
            ctype = self.headers.get("Content-Type", "")
            fields, files = {}, {}
            if ctype.startswith("application/json"):
                fields = json.loads(raw or b"{}")
            elif ctype.startswith("multipart/form-data"):
                message = email.message_from_bytes(
                    b"Content-Type: " + ctype.encode() + b"\r\n\r\n" + raw, policy=email.policy.HTTP)
                for part in message.iter_parts() if message.is_multipart() else []:
                    key = part.get_param("name", header="content-disposition")
                    value = part.get_payload(decode=True) or b""
                    if part.get_filename():
                        files[key] = {"filename": part.get_filename(), "size": len(value),
                                      "content_type": part.get_content_type(),
                                      "head": value[:200].decode("utf-8", "replace"),
                                      "png_size": png_size(value)}
                    elif key:
                        fields[key] = value.decode("utf-8", "replace")
            else:
                fields = {k: v[0] for k, v in urllib.parse.parse_qs(raw.decode()).items()}
            record.update({"chat_id": str(fields.get("chat_id", "")),
                           "message_thread_id": fields.get("message_thread_id")})
            chat = record["chat_id"]
            if not chat:
                return self.fail(400, "Bad Request: chat_id is empty", record)
            thread = fields.get("message_thread_id")
            if thread is not None and not re.fullmatch(r"-?\d+", str(thread)):
                return self.fail(400, "Bad Request: message_thread_id must be an integer", record)
            with lock:
                now = time.time()
                fast = now - last_call.get(chat, 0) < args.flood_seconds
                last_call[chat] = now
                if fast:
                    too_fast[0] += 1
                flood = fast and too_fast[0] % args.flood_every == 0
            if flood:
                return self.fail(429, "Too Many Requests: retry after 1", record,
                                 parameters={"retry_after": 1})
            reply = fields.get("reply_parameters")
            if reply is not None:
                try:
                    reply = json.loads(reply) if isinstance(reply, str) else reply
                    if not isinstance(reply, dict) or not isinstance(reply.get("message_id"), int):
                        raise ValueError
                except ValueError:
                    return self.fail(400, "Bad Request: can't parse reply parameters JSON object", record)
                with lock:
                    known = reply["message_id"] in sent.get(chat, set())
                if not known and reply.get("allow_sending_without_reply") is not True:
                    return self.fail(400, "Bad Request: message to be replied not found", record)
                record["reply_to"] = reply["message_id"]
            method = m.group(2)
            if method == "sendMessage":
                text = fields.get("text", "")
                if not text:
                    return self.fail(400, "Bad Request: message text is empty", record)
                if fields.get("parse_mode") == "HTML":
                    try:
                        visible = parse_html(text)
                    except ValueError as e:
                        return self.fail(400, "Bad Request: " + str(e), record)
                else:
                    visible = text
                if utf16_len(visible) > 4096:
                    return self.fail(400, "Bad Request: message is too long", record)
                record.update({"text": text, "visible_length": utf16_len(visible)})
                return self.sent_ok(record)
            if method == "sendDocument":
                if "document" not in files:
                    return self.fail(400, "Bad Request: there is no document in the request", record)
                record.update({"document": files["document"], "caption": fields.get("caption", "")})
                return self.sent_ok(record)
            if method == "sendPhoto":
                photo = files.get("photo")
                if not photo:
                    return self.fail(400, "Bad Request: there is no photo in the request", record)
                dims = photo["png_size"]
                if (photo["size"] > 10 * 1024 * 1024 or not dims or dims[0] + dims[1] > 10000
                        or max(dims) > 20 * max(1, min(dims))):
                    return self.fail(400, "Bad Request: PHOTO_INVALID_DIMENSIONS", record)
                if len(fields.get("caption", "")) > 1024:
                    return self.fail(400, "Bad Request: message caption is too long", record)
                record.update({"photo": photo, "caption": fields.get("caption", "")})
                return self.sent_ok(record)
            return self.fail(404, "Not Found: method not found", record)

        def log_message(self, *a):
            pass

    http.server.ThreadingHTTPServer(("127.0.0.1", args.port), Handler).serve_forever()


if __name__ == "__main__":
    main()
