package dev.readygate.benchmark;

import java.io.BufferedInputStream;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.InetSocketAddress;
import java.net.Socket;
import java.nio.charset.StandardCharsets;
import java.util.Locale;
import org.jspecify.annotations.Nullable;

/**
 * One keep-alive HTTP/1.1 connection on a blocking socket: the lightest client there is, so that on a two-core
 * machine the load generator takes as little CPU from the server it measures as possible. Reads
 * {@code Content-Length} and chunked bodies. Not thread-safe: one per worker.
 */
final class HttpConnection implements AutoCloseable {

    /** A response: its status and body. */
    record Response(int status, String body) {}

    private final String host;
    private final int port;
    private final int timeoutMillis;
    private @Nullable Socket socket;
    private @Nullable InputStream in;
    private @Nullable OutputStream out;

    HttpConnection(String host, int port, int timeoutMillis) {
        this.host = host;
        this.port = port;
        this.timeoutMillis = timeoutMillis;
    }

    /** GET {@code path}; reconnects if the server closed the connection. */
    Response get(String path, String accept) throws IOException {
        return send("GET", path, accept, null);
    }

    Response postJson(String path, String json) throws IOException {
        return send("POST", path, "application/json", json);
    }

    private Response send(String method, String path, String accept, @Nullable String json) throws IOException {
        if (socket == null || socket.isClosed()) {
            connect();
        }
        byte[] body = json == null ? new byte[0] : json.getBytes(StandardCharsets.UTF_8);
        StringBuilder request = new StringBuilder()
                .append(method)
                .append(' ')
                .append(path)
                .append(" HTTP/1.1\r\nHost: ")
                .append(host)
                .append(':')
                .append(port)
                .append("\r\nAccept: ")
                .append(accept)
                .append("\r\n");
        if (json != null) {
            request.append("Content-Type: application/json\r\nContent-Length: ")
                    .append(body.length)
                    .append("\r\n");
        }
        request.append("\r\n");
        try {
            OutputStream o = out;
            o.write(request.toString().getBytes(StandardCharsets.US_ASCII));
            o.write(body);
            o.flush();
            return read();
        } catch (IOException ex) {
            close();
            throw ex;
        }
    }

    private void connect() throws IOException {
        Socket s = new Socket();
        s.setTcpNoDelay(true);
        s.connect(new InetSocketAddress(host, port), timeoutMillis);
        s.setSoTimeout(timeoutMillis);
        socket = s;
        in = new BufferedInputStream(s.getInputStream(), 16 * 1024);
        out = s.getOutputStream();
    }

    private Response read() throws IOException {
        String status = line();
        String[] parts = status.split(" ");
        if (parts.length < 2 || !parts[0].startsWith("HTTP/1.")) {
            throw new IOException("not an HTTP response: " + status);
        }
        int code = Integer.parseInt(parts[1]);
        long length = -1;
        boolean chunked = false;
        boolean closeAfter = false;
        String header;
        while (!(header = line()).isEmpty()) {
            String lower = header.toLowerCase(Locale.ROOT);
            if (lower.startsWith("content-length:")) {
                length = Long.parseLong(lower.substring(15).trim());
            } else if (lower.startsWith("transfer-encoding:") && lower.contains("chunked")) {
                chunked = true;
            } else if (lower.startsWith("connection:") && lower.contains("close")) {
                closeAfter = true;
            }
        }
        ByteArrayOutputStream body = new ByteArrayOutputStream();
        if (chunked) {
            long size;
            while ((size = Long.parseLong(line().split(";")[0].trim(), 16)) > 0) {
                copy(body, size);
                line();
            }
            while (!line().isEmpty()) {
                // trailers
            }
        } else if (length >= 0) {
            copy(body, length);
        } else {
            closeAfter = true;
            body.write(in.readAllBytes());
        }
        if (closeAfter) {
            close();
        }
        return new Response(code, body.toString(StandardCharsets.UTF_8));
    }

    private void copy(ByteArrayOutputStream body, long count) throws IOException {
        byte[] buffer = new byte[8192];
        long left = count;
        while (left > 0) {
            int read = in.read(buffer, 0, (int) Math.min(buffer.length, left));
            if (read < 0) {
                throw new IOException("connection closed mid-body");
            }
            body.write(buffer, 0, read);
            left -= read;
        }
    }

    private String line() throws IOException {
        StringBuilder line = new StringBuilder();
        int b;
        while ((b = in.read()) != -1) {
            if (b == '\n') {
                int end = line.length();
                return end > 0 && line.charAt(end - 1) == '\r' ? line.substring(0, end - 1) : line.toString();
            }
            line.append((char) b);
        }
        throw new IOException("connection closed");
    }

    /** One request on a fresh connection, or -1 when it cannot be made (refused, timed out). */
    static int status(String host, int port, String path, int timeoutMillis) {
        try (HttpConnection connection = new HttpConnection(host, port, timeoutMillis)) {
            return connection.get(path, "*/*").status();
        } catch (IOException | RuntimeException ex) {
            return -1;
        }
    }

    @Override
    public void close() {
        Socket s = socket;
        socket = null;
        if (s != null) {
            try {
                s.close();
            } catch (IOException ex) {
                // closing anyway
            }
        }
    }
}
