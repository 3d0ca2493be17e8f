package dev.readygate.secret;

import static org.assertj.core.api.Assertions.assertThat;
import static org.junit.jupiter.params.provider.Arguments.arguments;

import java.net.URI;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.CsvSource;
import org.junit.jupiter.params.provider.MethodSource;

class SecretRedactionTests {

    @ParameterizedTest(name = "{0} -> {1}")
    @CsvSource({
        // Secrets: the name says token, key, secret, password or credential.
        "hf_token, true",
        "HF_TOKEN, true",
        "--hf-token, true",
        "api_key, true",
        "--api-key, true",
        "VLLM_API_KEY, true",
        "openai_api_key, true",
        "apiKey, true",
        "X-Api-Key, true",
        "APIKey, true",
        "token, true",
        "access_token, true",
        "refreshToken, true",
        "secret, true",
        "client_secret, true",
        "AWS_SECRET_ACCESS_KEY, true",
        "password, true",
        "db-password, true",
        "passwd, true",
        "credentials, true",
        "aws_credentials, true",
        "secret_value, true",
        "password_hash, true",
        "Authorization, true",
        "basic_auth, true",
        "readygate.engine.api-key, true",
        // Not secrets: counts of tokens, tokenizers, token ids, where a secret is, text tokens.
        "max_tokens, false",
        "prompt_tokens, false",
        "completion_tokens, false",
        "kv_cache_size_tokens, false",
        "--max-num-batched-tokens, false",
        "max_num_batched_tokens, false",
        "tokenizer, false",
        "tokenizer_mode, false",
        "--tokenizer-revision, false",
        "skip_tokenizer_init, false",
        "token_ids, false",
        "return_token_ids, false",
        "return_tokens_as_token_ids, false",
        "tokenIds, false",
        "timeToFirstTokenMs, false",
        "bos_token, false",
        "eos_token, false",
        "prefill-per-token, false",
        "api_key_file, false",
        "api-key-file, false",
        "apiKeyEnv, false",
        "ssl_keyfile, false",
        "ssl_key_file, false",
        "password_file, false",
        "secret_name, false",
        "AWS_ACCESS_KEY_ID, false",
        "keyspace, false",
        "monkey, false",
        "model, false",
        "base-url, false",
        "max_model_len, false",
        "'', false",
    })
    void isSecretNameFollowsTheNameNotItsSubstrings(String name, boolean secret) {
        assertThat(SecretRedaction.isSecretName(name)).isEqualTo(secret);
    }

    static Stream<Arguments> texts() {
        return Stream.of(
                // URLs with user information.
                arguments("http://admin:P4ssw0rd@127.0.0.1:8000", "http://<redacted>@127.0.0.1:8000"),
                arguments(
                        "engine at https://user:p@ss@engine:8443/v1 refused",
                        "engine at https://<redacted>@engine:8443/v1 refused"),
                arguments("http://token@host/x and http://h/y", "http://<redacted>@host/x and http://h/y"),
                arguments("mailto-like user@example.com stays", "mailto-like user@example.com stays"),
                // Query strings.
                arguments(
                        "http://h:1/metrics?token=abc123&format=text",
                        "http://h:1/metrics?token=<redacted>&format=text"),
                arguments("GET /x?api_key=k&max_tokens=5", "GET /x?api_key=<redacted>&max_tokens=5"),
                // vLLM's non-default args, as vLLM 0.31 logs them (a Python dict's repr).
                arguments(
                        "non-default args: {'model_tag': 'Qwen/Qwen3-0.6B', 'api_key': ['s3cret-key'], 'hf_token': "
                                + "'hf_SECRETTOKEN123', 'max_model_len': 4096, 'max_num_batched_tokens': 8192}",
                        "non-default args: {'model_tag': 'Qwen/Qwen3-0.6B', 'api_key': '<redacted>', 'hf_token': "
                                + "'<redacted>', 'max_model_len': 4096, 'max_num_batched_tokens': 8192}"),
                arguments("{'hf_token': None, 'tokenizer': 'x'}", "{'hf_token': None, 'tokenizer': 'x'}"),
                arguments("{'hf_token': True}", "{'hf_token': True}"),
                arguments("{'hf_token': ''}", "{'hf_token': ''}"),
                arguments("{'api_key': ('b', 'c'), 'x': 1}", "{'api_key': '<redacted>', 'x': 1}"),
                arguments("{'api_key': ['s3cret', 'cut-off", "{'api_key': '<redacted>'"),
                arguments("{'api_key': 's3\\'cret', 'port': 8000}", "{'api_key': '<redacted>', 'port': 8000}"),
                arguments("{'api_key_file': '/etc/key'}", "{'api_key_file': '/etc/key'}"),
                arguments(
                        "Namespace(host=None, api_key='s3cret', hf_token='hf_x', port=8000)",
                        "Namespace(host=None, api_key='<redacted>', hf_token='<redacted>', port=8000)"),
                // JSON, and JSON inside a JSON string.
                arguments("{\"api_key\": \"s3cret\", \"port\": 8000}", "{\"api_key\": \"<redacted>\", \"port\": 8000}"),
                arguments("{\"password\":\"hunter2\"}", "{\"password\":\"<redacted>\"}"),
                arguments("\"{\\\"hf_token\\\": \\\"hf_abc\\\"}\"", "\"{\\\"hf_token\\\": \\\"<redacted>\\\"}\""),
                // Command lines.
                arguments(
                        "vllm serve Qwen/Qwen3-0.6B --hf-token hf_abc --max-num-batched-tokens 512",
                        "vllm serve Qwen/Qwen3-0.6B --hf-token <redacted> --max-num-batched-tokens 512"),
                arguments("vllm serve m --api-key=sk-123 --port 8000", "vllm serve m --api-key=<redacted> --port 8000"),
                arguments(
                        "['vllm', 'serve', '--api-key', 'sk-123', '--port']",
                        "['vllm', 'serve', '--api-key', '<redacted>', '--port']"),
                arguments("vllm serve m --api-key --port 8000", "vllm serve m --api-key --port 8000"),
                // Environment-like and headers.
                arguments(
                        "HF_TOKEN=hf_abc VLLM_API_KEY=k2 HOME=/root",
                        "HF_TOKEN=<redacted> VLLM_API_KEY=<redacted> HOME=/root"),
                arguments("Authorization: Bearer abc.def", "Authorization: Bearer <redacted>"),
                arguments("password: hunter2", "password: <redacted>"),
                // Secrets known by their shape alone, without a name (an engine's exception text).
                arguments(
                        "401 Client Error: Unauthorized for url: https://huggingface.co/api/models/m (token"
                                + " hf_AbCdEfGhIjKlMnOpQrStUvWxYzAbCdEfGh)",
                        "401 Client Error: Unauthorized for url: https://huggingface.co/api/models/m (token"
                                + " <redacted>)"),
                arguments("token hf_SECRETTOKEN123 was refused", "token <redacted> was refused"),
                arguments("invalid key sk-proj-Ab12_cd34-EF56gh78 given", "invalid key <redacted> given"),
                arguments("key sk-APIKEYVALUE9.", "key <redacted>."),
                arguments("sent Bearer bearerXYZ321 upstream", "sent Bearer <redacted> upstream"),
                arguments("header: bearer abc.def-ghi", "header: bearer <redacted>"),
                arguments(
                        "jwt=x; got eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiJvcHMifQ.c2lnbmF0dXJlMTIz from the proxy",
                        "jwt=x; got <redacted> from the proxy"),
                arguments("unsigned eyJhbGciOiJub25lIn0.eyJzdWIiOiJvcHMifQ. end", "unsigned <redacted> end"),
                arguments(
                        "S3 denied AKIAIOSFODNN7EXAMPLE and ASIAY34FZKBOKMUTVV7A",
                        "S3 denied <redacted> and <redacted>"),
                arguments("'hf_token': 'hf_AbCdEfGhIjKlMnOpQrStUvWxYzAbCdEfGh'", "'hf_token': '<redacted>'"),
                // Words of those shapes that are no secrets stay.
                arguments(
                        "hf_transfer and hf_overrides, HF_HUB_OFFLINE=1, disk-usage, task-queue",
                        "hf_transfer and hf_overrides, HF_HUB_OFFLINE=1, disk-usage, task-queue"),
                arguments("Bearer authentication is required", "Bearer authentication is required"),
                arguments("AKIA1234 is too short, ASIAN markets", "AKIA1234 is too short, ASIAN markets"),
                arguments("eyJ alone, eyJhbGci.x", "eyJ alone, eyJhbGci.x"),
                // Prose and counts stay.
                arguments("the API key is read from a file", "the API key is read from a file"),
                arguments("max_tokens=64, prompt_tokens: 512", "max_tokens=64, prompt_tokens: 512"),
                arguments("", ""));
    }

    @ParameterizedTest(name = "{0}")
    @MethodSource("texts")
    void redactReplacesEverySecretValueAndKeepsTheRest(String text, String redacted) {
        assertThat(SecretRedaction.redact(text)).isEqualTo(redacted);
    }

    @Test
    void redactOfAUriDropsItsUserInfo() {
        assertThat(SecretRedaction.redact(URI.create("http://admin:P4ssw0rd@127.0.0.1:8000/")))
                .isEqualTo("http://<redacted>@127.0.0.1:8000/");
        assertThat(SecretRedaction.redact(URI.create("http://127.0.0.1:8000"))).isEqualTo("http://127.0.0.1:8000");
    }

    @Test
    void redactIsIdempotent() {
        texts().forEach(arguments -> {
            String once = SecretRedaction.redact((String) arguments.get()[0]);
            assertThat(SecretRedaction.redact(once)).isEqualTo(once);
        });
    }
}
