"""infer-serve against the real tritonclient package, on all-MiniLM-L6-v2.

Starts the server on a free port, then checks: liveness, readiness and metadata; inference with
JSON tensors and with the binary data extension against the model's reference outputs
(test_data_set_0, from PyTorch); ragged single-row requests from several client threads at once
(batched together, each answer checked); refused requests (unknown model, wrong shape and
datatype, missing input, malformed and oversized bodies, past its timeout) each with its 4xx and a JSON message,
the server still serving after them; the batcher's statistics; and a graceful SIGTERM that
answers the requests in flight.
"""
import argparse
import http.client
import json
import os
import queue
import signal
import subprocess
import sys
import threading
import time

import numpy as np
import tritonclient.http as httpclient
from tritonclient.utils import InferenceServerException

MODEL = "all-MiniLM-L6-v2"
INPUTS = ["input_ids", "attention_mask", "token_type_ids"]
TOLERANCE = 2e-4  # infer's f32 CPU run against PyTorch's reference (docs/models.md: ~1e-6 typical)
MAX_BODY = 1 << 20

failures = []


def check(condition, what):
    print(("ok    " if condition else "FAIL  ") + what, flush=True)
    if not condition:
        failures.append(what)


def start_server(serve, model):
    process = subprocess.Popen(
        [serve, model, "--port", "0", "--host", "127.0.0.1", "--max-batch", "8", "--max-delay-ms", "5",
         "--max-body-bytes", str(MAX_BODY), "--http-threads", "16"],
        stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    lines = queue.Queue()
    threading.Thread(target=lambda: [lines.put(line) for line in process.stdout] and lines.put(None),
                     daemon=True).start()
    deadline = time.time() + 180
    while time.time() < deadline:
        try:
            line = lines.get(timeout=1)
        except queue.Empty:
            continue
        if line is None:
            break
        print("server: " + line.rstrip(), flush=True)
        if "listening on http://" in line:
            port = int(line.rsplit(":", 1)[1])
            return process, port, lines
    process.kill()
    sys.exit("FAIL: infer-serve did not start listening")


def make_inputs(arrays, binary):
    inputs = []
    for name, array in zip(INPUTS, arrays):
        item = httpclient.InferInput(name, list(array.shape), "INT64")
        item.set_data_from_numpy(array, binary_data=binary)
        inputs.append(item)
    return inputs


def infer(client, arrays, binary):
    outputs = [httpclient.InferRequestedOutput("last_hidden_state", binary_data=binary)]
    result = client.infer(MODEL, make_inputs(arrays, binary), outputs=outputs, request_id="req-42")
    return result


def refused(status, what, call):
    try:
        call()
    except InferenceServerException as e:
        check(str(e.status()) == str(status) and len(e.message()) > 0,
              f"{what}: {status} with a message (got {e.status()}: {e.message()})")
        return
    check(False, f"{what}: refused with {status}")


def raw_post(port, path, body, headers=None):
    connection = http.client.HTTPConnection("127.0.0.1", port, timeout=60)
    connection.request("POST", path, body=body, headers=headers or {})
    response = connection.getresponse()
    data = response.read()
    connection.close()
    return response.status, data


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--serve", required=True)
    parser.add_argument("--model", required=True)
    args = parser.parse_args()

    data = os.path.join(args.model, "test_data_set_0")
    arrays = [np.load(os.path.join(data, f"input_{i}.npy")) for i in range(3)]
    reference = np.load(os.path.join(data, "output_0.npy"))
    lengths = arrays[1].sum(axis=1)

    process, port, lines = start_server(args.serve, args.model)
    try:
        client = httpclient.InferenceServerClient(f"127.0.0.1:{port}")
        check(client.is_server_live(), "server live")
        check(client.is_server_ready(), "server ready")
        check(client.is_model_ready(MODEL), "model ready")
        check(not client.is_model_ready("no-such-model"), "unknown model not ready")
        server = client.get_server_metadata()
        check("binary_tensor_data" in server["extensions"], "server metadata lists binary_tensor_data")

        metadata = client.get_model_metadata(MODEL)
        check(metadata["name"] == MODEL, "model metadata: name")
        check(sorted(i["name"] for i in metadata["inputs"]) == sorted(INPUTS), "model metadata: input names")
        check(all(i["datatype"] == "INT64" and i["shape"] == [-1, -1] for i in metadata["inputs"]),
              "model metadata: inputs INT64 [-1, -1]")
        check(metadata["outputs"] == [{"name": "last_hidden_state", "datatype": "FP32", "shape": [-1, -1, 384]}],
              f"model metadata: output last_hidden_state FP32 [-1, -1, 384] ({metadata['outputs']})")

        for binary in (False, True):
            kind = "binary" if binary else "JSON"
            result = infer(client, arrays, binary)
            output = result.as_numpy("last_hidden_state")
            check(result.get_response()["id"] == "req-42", f"{kind}: id echoed")
            check(output is not None and output.shape == reference.shape, f"{kind}: output shape {reference.shape}")
            error = float(np.abs(output - reference).max())
            check(error < TOLERANCE, f"{kind}: 10 sentences against PyTorch's reference, max error {error:.2e}")

        # Ragged single-row requests from several threads: batched with each other, padded to
        # a bucket, cut back to each row's own length.
        errors, answered = [], [0]
        lock = threading.Lock()

        def client_thread(t):
            own = httpclient.InferenceServerClient(f"127.0.0.1:{port}")
            for r in range(8):
                row = (t * 3 + r) % len(lengths)
                n = int(lengths[row])
                rows = [a[row:row + 1, :n] for a in arrays]
                out = infer(own, rows, binary=(r % 2 == 0)).as_numpy("last_hidden_state")
                e = float(np.abs(out[0] - reference[row, :n]).max())
                with lock:
                    answered[0] += 1
                    if out.shape != (1, n, 384) or e >= TOLERANCE:
                        errors.append((t, r, out.shape, e))

        threads = [threading.Thread(target=client_thread, args=(t,)) for t in range(8)]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join()
        check(answered[0] == 64 and not errors, f"8 threads x 8 ragged rows, every answer right ({errors[:3]})")

        refused(404, "unknown model", lambda: client.infer("no-such-model", make_inputs(arrays, False)))
        wrong_rank = httpclient.InferInput("input_ids", [1, 1, 21], "INT64")
        wrong_rank.set_data_from_numpy(arrays[0][:1].reshape(1, 1, 21))
        refused(400, "wrong shape (rank 3)", lambda: client.infer(MODEL, [wrong_rank] + make_inputs(arrays, False)[1:]))
        rows_differ = make_inputs([arrays[0][:2], arrays[1][:1], arrays[2][:1]], False)
        refused(400, "inputs with different rows", lambda: client.infer(MODEL, rows_differ))
        wrong_type = httpclient.InferInput("input_ids", [1, 21], "INT32")
        wrong_type.set_data_from_numpy(arrays[0][:1].astype(np.int32))
        refused(400, "wrong datatype", lambda: client.infer(MODEL, [wrong_type] + make_inputs(arrays, False)[1:]))
        refused(400, "missing input", lambda: client.infer(MODEL, make_inputs(arrays, True)[:2]))
        refused(400, "unknown output", lambda: client.infer(
            MODEL, make_inputs(arrays, False), outputs=[httpclient.InferRequestedOutput("logits")]))

        # A timeout of 1 microsecond has passed before any batch can run it.
        refused(504, "past its timeout", lambda: client.infer(MODEL, make_inputs(arrays, False), timeout=1))

        path = f"/v2/models/{MODEL}/infer"
        status, body = raw_post(port, path, b'{"inputs": [ {"name": ')
        check(status == 400 and "malformed JSON" in json.loads(body)["error"], f"malformed JSON: 400 ({status} {body[:80]})")
        status, body = raw_post(port, path, b'{"inputs": []}', {"Inference-Header-Content-Length": "999"})
        check(status == 400 and "error" in json.loads(body), f"header length past the body: 400 ({status})")
        status, body = raw_post(port, path, b"x" * (MAX_BODY + 1))
        check(status == 413 and "max-body-bytes" in json.loads(body)["error"], f"oversized body: 413 ({status} {body[:80]})")
        status, body = raw_post(port, "/v2/nothing", b"{}")
        check(status == 404 and "error" in json.loads(body), f"unknown endpoint: 404 ({status})")

        output = infer(client, arrays, True).as_numpy("last_hidden_state")
        check(float(np.abs(output - reference).max()) < TOLERANCE, "still serving right after the refused requests")

        connection = http.client.HTTPConnection("127.0.0.1", port, timeout=30)
        connection.request("GET", f"/v2/models/{MODEL}/stats")
        stats = json.loads(connection.getresponse().read())
        served_rows = 10 * 3 + 64  # the request past its timeout counts as cancelled
        check(stats["completed"] == served_rows and stats["failed"] == 0 and stats["cancelled"] == 10,
              f"stats: {served_rows} rows completed, none failed, 10 cancelled "
              f"({stats['completed']}, {stats['failed']}, {stats['cancelled']})")
        check(sum(int(n) * c for n, c in stats["batch_sizes"].items()) == served_rows and stats["batches"] <= served_rows,
              f"stats: batch sizes add up ({stats['batch_sizes']}, {stats['batches']} batches)")
        check(stats["latency_ms"]["p50"] > 0, "stats: latency percentiles")

        # SIGTERM with requests in flight (all their rows accepted by the batcher, most still
        # waiting): each is answered, then the server exits cleanly.
        def accepted():
            connection = http.client.HTTPConnection("127.0.0.1", port, timeout=30)
            connection.request("GET", f"/v2/models/{MODEL}/stats")
            return json.loads(connection.getresponse().read())["accepted"]
        before = accepted()
        results = []
        def late_request():
            own = httpclient.InferenceServerClient(f"127.0.0.1:{port}", network_timeout=120)
            try:
                results.append(infer(own, arrays, True).as_numpy("last_hidden_state").shape == reference.shape)
            except Exception as e:  # noqa: BLE001 - any failure is what this check counts
                results.append(repr(e))
        late = [threading.Thread(target=late_request) for _ in range(4)]
        for thread in late:
            thread.start()
        deadline = time.time() + 60
        while accepted() < before + 4 * 10 and time.time() < deadline:
            time.sleep(0.01)
        process.send_signal(signal.SIGTERM)
        for thread in late:
            thread.join()
        code = process.wait(timeout=60)
        check(results == [True] * 4, f"requests in flight at SIGTERM answered ({results})")
        check(code == 0, f"server exits 0 after SIGTERM ({code})")
    finally:
        if process.poll() is None:
            process.kill()
        while True:
            try:
                line = lines.get(timeout=2)
            except queue.Empty:
                break
            if line is None:
                break
            print("server: " + line.rstrip())

    if failures:
        print(f"tritonclient_test: {len(failures)} FAILED: {failures}")
        return 1
    print("tritonclient_test: all checks passed")
    return 0


if __name__ == "__main__":
    sys.exit(main())
