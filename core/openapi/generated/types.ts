// generated — do not edit; run npm run gen (scripts/gen-openapi-types.ts from openapi/openapi.yaml)

export interface paths {
    "/v1/chat/completions": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        get?: never;
        put?: never;
        /**
         * Create a chat completion
         * @description Relayed to the upstream provider and charged from the caller's balance: a reservation (an upper bound
         *     of the cost, from the prompt size and `max_tokens` or what the balance affords) is taken before the
         *     call and settled to the metered cost after it. With `stream: true` the answer is `text/event-stream`:
         *     `data: <chat.completion.chunk JSON>` events ending with `data: [DONE]`; X-Cashu calls get their change
         *     as an SSE comment line `: x-cashu <token>` before `data: [DONE]`. Unknown extra fields are relayed
         *     unchanged (providers add their own).
         *
         *     Images count in the bound by the model's image formula, from the size an inline image's header gives
         *     and its `detail` (an image by URL at the most that detail can cost). A file by id or URL counts
         *     `REFERENCE_MAX_TOKENS` tokens; without that setting the call is refused with 400 `reference_not_bounded`
         *     before the provider sees it (docs/pricing.md "The bound"). A file sent inline (a PDF, whose pages render
         *     as images) makes the input bound the model's whole context window (unknown: `REFERENCE_MAX_TOKENS` more,
         *     else the same refusal). Without a max-tokens field the output bound is the whole window; with the window
         *     unknown, 4,096 tokens written into the forwarded body as `max_completion_tokens`.
         */
        post: operations["createChatCompletion"];
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/v1/completions": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        get?: never;
        put?: never;
        /**
         * Create a text completion (legacy)
         * @description Relayed and metered by tokens like chat completions (available, as in OpenAI's API). Streaming works the same way.
         */
        post: operations["createCompletion"];
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/v1/embeddings": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        get?: never;
        put?: never;
        /**
         * Create embeddings
         * @description Available, relayed and metered by prompt tokens.
         */
        post: operations["createEmbedding"];
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/v1/responses": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        get?: never;
        put?: never;
        /**
         * Create a model response (OpenAI Responses API)
         * @description Relayed and metered by tokens (`usage.input_tokens` / `output_tokens`). The OpenAI Responses API shape is relayed, only `model` is checked here. The created response belongs to the calling key (see `GET /v1/responses/{response_id}`); a `previous_response_id` of another key's response is 404 `not_found`, refused before the provider sees it. An `input_file` by `file_id` or `file_url` counts `REFERENCE_MAX_TOKENS` tokens in the reservation, or is refused with 400 `reference_not_bounded` when that is unset; an inline `input_file` makes the input bound the model's whole context window (if unknown, `REFERENCE_MAX_TOKENS` more, else the same refusal); images count by their model's formula from their size and `detail`; each web search call adds `WEB_SEARCH_CONTENT_TOKENS` input tokens for its results. Without `max_output_tokens` the output bound is the whole window; with the window unknown, 4,096 tokens written into the forwarded body.
         */
        post: operations["createResponse"];
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/v1/messages": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        get?: never;
        put?: never;
        /**
         * Create a message (Anthropic Messages API)
         * @description Anthropic's Messages API, relayed byte for byte (streamed or not) to a provider — one declaring
         *     `"api": "anthropic"` in the providers file gets the node's key as `x-api-key` with `anthropic-version`.
         *     Authenticate with `x-api-key: sk-…` (what Anthropic SDKs send) or `Authorization: Bearer`, or pay per call
         *     with `X-Cashu`. Reserved from `max_tokens` and a bound of the prompt; charged from the answer's `usage`:
         *     uncached input at `prompt`, cache reads at `input_cache_read`, 5-minute and 1-hour cache writes at
         *     `input_cache_write` / `input_cache_write_1h`, output at `completion`, web search requests at
         *     `web_search`, times the reported service tier's multiplier. The charge is in the `X-Node-Cost` header
         *     (non-stream; the body is not changed) or the final SSE comment `: x-node-cost {…}` (streams). Errors use
         *     Anthropic's shape `{"type":"error","error":{"type","message","code"}}` with this node's `code`.
         */
        post: operations["createMessage"];
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/v1/messages/count_tokens": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        get?: never;
        put?: never;
        /**
         * Count the tokens of a message (Anthropic Messages API; free)
         * @description Relayed to the provider like `/v1/messages` and never charged (0 msat, `X-Node-Cost: 0`); the caller
         *     still needs a valid credential and counts against its rate limits.
         */
        post: operations["countMessageTokens"];
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/v1/realtime": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /**
         * A Realtime session over WebSocket, metered per response and paid as it goes
         * @description Send `Upgrade: websocket` (either engine). The gateway authenticates (`Authorization: Bearer sk-…` or an
         *     eCash token, or the `openai-insecure-api-key.<key>` subprotocol; the answer names the `realtime`
         *     subprotocol when offered, never the key), reserves the first response, opens its own WebSocket to the
         *     provider with the operator's key and answers 101; from then on the Realtime API's events are relayed both
         *     ways in order. Refusals come before the upgrade, as HTTP error envelopes.
         *
         *     The gateway adds two server events (schemas `RealtimeGatewayCost`, `RealtimeGatewayError`): a
         *     `gateway.cost` after each `response.done` (the response's charge, its dimensions, the transcriptions
         *     charged with it and the balance left), and `error` events of its own (`insufficient_balance` with
         *     `details.balance` and `details.needed` in msats, `upstream_error`, `invalid_json`, `invalid_request`).
         *     Close codes: 1000 client closed, 1001 shutdown, 1003 binary frame, 1007 invalid event, 1009 frame over
         *     REALTIME_MAX_FRAME_BYTES, 1011 store failure, 1014 provider closed, 4000 idle, 4001 maximum length,
         *     4008 slow reader, 4402 insufficient balance (README "Realtime").
         *     `POST /v1/realtime/client_secrets` is not served (404 `endpoint_not_enabled`): WebRTC media would
         *     bypass the gateway.
         */
        get: operations["realtimeSession"];
        put?: never;
        post?: never;
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/v1/images/generations": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        get?: never;
        put?: never;
        /**
         * Generate images
         * @description Charged per image from the model's price book (models.json `image_sizes[size][quality]`, else
         *     `image`, USD × fees at the BTC price; `FIXED_PRICING=true`: the flat per-call price): `n` images are
         *     reserved before the call and the images actually returned (`data.length`) are charged. A model with no
         *     image price is refused with 400 `model_not_priced` before anything is reserved. `model` is required
         *     on this gateway (pricing and key allow-lists need it).
         */
        post: operations["createImage"];
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/v1/audio/transcriptions": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        get?: never;
        put?: never;
        /**
         * Transcribe audio
         * @description Multipart upload, relayed byte for byte. Charged by the duration of the `file` part, measured by the
         *     gateway before the call (models.json `audio_minute`, pro rata to the millisecond; `FIXED_PRICING=true`:
         *     flat). A file whose duration cannot be read (not wav, mp3, m4a/mp4, webm, ogg, flac) is refused with
         *     400 `invalid_request` before anything is reserved; a model without `audio_minute` with 400
         *     `model_not_priced`. The `model` field is required (allow-lists apply).
         */
        post: operations["createTranscription"];
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/v1/audio/translations": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        get?: never;
        put?: never;
        /**
         * Translate audio to English
         * @description As transcriptions (same pricing by duration); the text is always English.
         */
        post: operations["createTranslation"];
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/v1/audio/speech": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        get?: never;
        put?: never;
        /**
         * Text to speech
         * @description Charged by the characters (Unicode code points) of `input` (models.json `speech_1k_chars`, USD per
         *     1,000; `FIXED_PRICING=true`: flat), known before the call, so `X-Node-Cost` is in the head. The audio
         *     answer streams through unbuffered.
         */
        post: operations["createSpeech"];
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/v1/images/edits": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        get?: never;
        put?: never;
        /**
         * Edit an image
         * @description Multipart upload relayed byte for byte; priced like image generation from the `model`, `n`, `size` and `quality` fields (per image returned).
         */
        post: operations["createImageEdit"];
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/v1/images/variations": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        get?: never;
        put?: never;
        /**
         * Variations of an image
         * @description As image edits (multipart, priced per image returned).
         */
        post: operations["createImageVariation"];
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/v1/models": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /**
         * List the models
         * @description The upstream provider's models merged with the operator's `models.json`, with prices. Free; credentials are optional (also accepted as query `api_key`).
         */
        get: operations["listModels"];
        put?: never;
        post?: never;
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/v1/models/{model}": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /**
         * One model (the SDKs' models.retrieve)
         * @description Public like the list; the same item as in `GET /v1/models`. 404 `not_found` for a model the catalogue does not list. A model id containing `/` cannot be named here (one path segment; encoded slashes are refused) — read it from the list.
         */
        get: operations["retrieveModel"];
        put?: never;
        post?: never;
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/v1/info": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /**
         * Node information
         * @description Free; no credentials needed.
         */
        get: operations["getNodeInfo"];
        put?: never;
        post?: never;
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/v1/providers": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /**
         * List the upstream providers
         * @description Free; no credentials needed. One entry per configured upstream.
         */
        get: operations["listProviders"];
        put?: never;
        post?: never;
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/v1/providers/{provider_name}": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /**
         * One provider in detail
         * @description Free; no credentials needed.
         */
        get: operations["getProvider"];
        put?: never;
        post?: never;
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/v1/estimate": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        get?: never;
        put?: never;
        /**
         * Estimate the cost of a call
         * @description The price of a call with the given token counts under the current pricing model; nothing is charged
         *     and credentials are optional. The real charge is computed from the upstream's reported usage.
         */
        post: operations["estimateCost"];
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/v1/wallet/create": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        get?: never;
        put?: never;
        /**
         * Create an API key by depositing an eCash token
         * @description Redeems the token at its mint (it must be a mint this node trusts) and creates a key whose balance
         *     is what the swap yielded (face value minus the mint's input fee), in msats. No credentials needed.
         *     Idempotent by token: retrying with the same token (for example after a lost answer) returns the same
         *     key instead of failing as already spent.
         */
        post: operations["createWallet"];
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/v1/wallet/": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /**
         * Account information and remaining balance
         * @description Also answered at `/v1/wallet` (no trailing slash).
         */
        get: operations["getWalletAccount"];
        put?: never;
        post?: never;
        /**
         * Pay the remaining balance out and delete the key
         * @description The owner closes the key: it is disabled (no call is admitted any more, on any process), every whole
         *     sat available is paid out as an eCash token in the answer (the one pay-out step), then the key is
         *     deleted with its children. Sub-sat remainders stay on the deleted account (`left_msats`). While a call
         *     or withdrawal of the key is in flight the answer is 409 `conflict` and nothing changes. Child keys
         *     cannot delete the account (403 `child_key_forbidden`).
         */
        delete: operations["deleteWallet"];
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/v1/wallet/balance": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /** Balance of the calling key */
        get: operations["getWalletBalance"];
        put?: never;
        post?: never;
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/v1/balance/info": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /** Key information, including child keys */
        get: operations["getBalanceInfo"];
        put?: never;
        post?: never;
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/v1/files": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /**
         * List the calling key's files
         * @description The calling key's files, newest first, answered from the gateway's ownership records (never the
         *     provider's list, which holds every key's objects): `limit` of them after the `after` cursor, with
         *     `has_more` when more follow; each object's current state is read from the provider (one it no longer
         *     has is left out of the page). `order` other than `desc` and other filters (e.g. `purpose`) are
         *     refused with 400.
         */
        get: operations["listFiles"];
        put?: never;
        /**
         * Upload a file (Batch API input)
         * @description `multipart/form-data` with `purpose` and `file`, relayed to the provider on the operator's key and
         *     recorded against the calling key: only that key can read, list or delete it (any other key gets 404).
         *     The upload streams through, never held whole: the body (at most `FILES_MAX_BYTES`, 200 MiB by default,
         *     not `MAX_BODY_BYTES`) is spooled to a temporary file while it is checked, and only a file that passed is
         *     relayed. For `purpose: "batch"` the JSONL is checked line by line before anything reaches the provider:
         *     each line `{custom_id, method: "POST", url, body}` of at most `MAX_BODY_BYTES`, one `url`
         *     (`/v1/chat/completions`, `/v1/completions`, `/v1/embeddings` or `/v1/responses`) and one known model per
         *     file, unique `custom_id`s, at most `BATCH_MAX_LINES` lines; a refusal is 400 `invalid_request` whose
         *     message and `details.line` name the line. The file's bound (each line's reservation bound at the batch price,
         *     by the synchronous call's rules: images by their model's image rule, files by id or URL at
         *     `REFERENCE_MAX_TOKENS`, a conversation or stored prompt at `STORED_CONTEXT_MAX_TOKENS`, a continued stored
         *     response's recorded context; a line the settings cannot bound is refused 400 `reference_not_bounded` or
         *     `context_not_bounded`, naming it) is recorded with it and reserved when a batch is created from it. Other purposes are refused with 400 unless
         *     `FILES_OTHER_PURPOSES=true`. Not charged. X-Cashu is refused (it names no account).
         */
        post: operations["uploadFile"];
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/v1/files/{file_id}": {
        parameters: {
            query?: never;
            header?: never;
            path: {
                file_id: string;
            };
            cookie?: never;
        };
        /**
         * A file of the calling key
         * @description 404 for a file of another key (a batch's output and error files belong to the batch's key).
         */
        get: operations["getFile"];
        put?: never;
        post?: never;
        /**
         * Delete a file of the calling key
         * @description 404 for a file of another key.
         */
        delete: operations["deleteFile"];
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/v1/files/{file_id}/content": {
        parameters: {
            query?: never;
            header?: never;
            path: {
                file_id: string;
            };
            cookie?: never;
        };
        /**
         * The content of a file of the calling key
         * @description The bytes as the provider sends them (a batch output is JSONL). 404 for a file of another key.
         */
        get: operations["getFileContent"];
        put?: never;
        post?: never;
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/v1/batches": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /**
         * List the calling key's batches
         * @description The calling key's batches, newest first, answered from the gateway's ownership records (never the
         *     provider's list, which holds every key's objects): `limit` of them after the `after` cursor, with
         *     `has_more` when more follow; each object's current state is read from the provider (one it no longer
         *     has is left out of the page). Their output and error files become readable by the key. `order` other than `desc` and other filters (e.g. `purpose`) are
         *     refused with 400.
         */
        get: operations["listBatches"];
        put?: never;
        /**
         * Create a batch from an input file of the calling key
         * @description Reserves the input file's bound (every line's reservation bound at the batch price: the model's
         *     `pricing.batch` multiplier, else `BATCH_PRICE_FACTOR`) BEFORE the provider sees the batch: a balance
         *     that cannot cover it gets 402 with `details.required` = the bound and nothing is relayed. A provider
         *     that answers no (any non-2xx), or a call that never reached it, releases the reservation at once. A call
         *     sent and left without a clear answer (a timeout, a dropped connection, an unreadable 2xx) keeps it: the
         *     provider may have made the batch. The answer is then 502 `batch_outcome_unknown` (`details.input_file_id`)
         *     and the gateway searches the provider's batch list for a batch made from that file at or after the call
         *     (once per `BATCH_POLL_MS`, at most `BATCH_RECONCILE_POLLS` times): found, it becomes the key's batch (it
         *     appears in `GET /v1/batches`) and is settled as usual; not found, the reservation is released. When the batch ends (completed, failed, expired, cancelled) the
         *     settlement watcher charges the answered lines of the output file from their `usage` at the batch price,
         *     never more than the reservation, as one `batch` transaction; error lines are free. See docs/pricing.md.
         */
        post: operations["createBatch"];
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/v1/batches/{batch_id}": {
        parameters: {
            query?: never;
            header?: never;
            path: {
                batch_id: string;
            };
            cookie?: never;
        };
        /**
         * A batch of the calling key
         * @description 404 for a batch of another key. Its output and error files become readable by the same key.
         */
        get: operations["getBatch"];
        put?: never;
        post?: never;
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/v1/batches/{batch_id}/cancel": {
        parameters: {
            query?: never;
            header?: never;
            path: {
                batch_id: string;
            };
            cookie?: never;
        };
        get?: never;
        put?: never;
        /**
         * Cancel a batch of the calling key
         * @description 404 for a batch of another key. Once the provider reports it `cancelled`, the lines it answered before
         *     are charged at the batch price and the rest of the reservation is released.
         */
        post: operations["cancelBatch"];
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/v1/responses/{response_id}": {
        parameters: {
            query?: never;
            header?: never;
            path: {
                response_id: string;
            };
            cookie?: never;
        };
        /**
         * A stored response created by the calling key
         * @description Relayed to the provider only for the key that created the response (recorded from the creating answer:
         *     its `id`, or a stream's `response.created` event); 404 for any other key. Not charged.
         */
        get: operations["getResponse"];
        put?: never;
        post?: never;
        /**
         * Delete a stored response created by the calling key
         * @description 404 for any other key.
         */
        delete: operations["deleteResponse"];
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/v1/responses/{response_id}/cancel": {
        parameters: {
            query?: never;
            header?: never;
            path: {
                response_id: string;
            };
            cookie?: never;
        };
        get?: never;
        put?: never;
        /**
         * Cancel a background response created by the calling key
         * @description Relayed to the provider only for the key that created the response; 404 for any other key. Not charged
         *     itself: the response's reservation is settled by the watcher once the provider reports it cancelled, at
         *     what the provider billed (docs/pricing.md, "Background responses").
         */
        post: operations["cancelResponse"];
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/v1/responses/{response_id}/input_items": {
        parameters: {
            query?: never;
            header?: never;
            path: {
                response_id: string;
            };
            cookie?: never;
        };
        /**
         * The input items of a stored response created by the calling key
         * @description 404 for any other key.
         */
        get: operations["listResponseInputItems"];
        put?: never;
        post?: never;
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/v1/wallet/topup": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        get?: never;
        put?: never;
        /**
         * Add an eCash token's value to the calling key
         * @description The token comes in the body (`cashu_token`) or, for clients that cannot send a body, as the query
         *     parameter `cashu_token`; exactly one of the two. It is redeemed at its mint and the yield (after the
         *     mint's input fee) is credited, once: the same token is never credited twice. Child keys cannot top
         *     up (they draw on their parent's balance).
         */
        post: operations["topupWallet"];
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/v1/wallet/transactions": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /** The key's transactions, newest first */
        get: operations["listTransactions"];
        put?: never;
        post?: never;
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/v1/wallet/audit": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /**
         * The key's audit log, newest first
         * @description One record per request that named this key (paid calls admitted or refused, wallet and balance
         *     operations, child keys, sub-keys, updates), with the audit fields and the request id. A parent key
         *     sees its whole account (its children's records too); a child key only its own. Records are written in
         *     batches a fraction of a second after the request ended and kept for AUDIT_RETENTION_DAYS.
         */
        get: operations["listWalletAudit"];
        put?: never;
        post?: never;
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/v1/wallet/withdraw": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        get?: never;
        put?: never;
        /**
         * Withdraw part of the balance as an eCash token
         * @description Mints a token of `amount` sats (default: every whole sat of the available balance) at `mint`
         *     (default: the node's primary mint) and debits its value. Held-then-committed: a failure at the mint
         *     debits nothing. Child keys cannot withdraw.
         */
        post: operations["withdrawWallet"];
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/v1/wallet/refund": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        get?: never;
        put?: never;
        /**
         * Refund the whole remaining balance, as an eCash token or to the key's Lightning address
         * @description No body (or `{}`): as POST /v1/wallet/withdraw with no amount, at the primary mint; sub-sat remainders
         *     stay on the key.
         *
         *     `{"to": "refund_address"}`: pays the balance to the key's refund address (set with POST
         *     /v1/wallet/update) through the operator's mint: the address's LNURL-pay callback gives an invoice for
         *     the largest whole-sat amount that, with the mint's Lightning fee reserve, fits what is available, and
         *     the mint pays it (a melt). The key is debited the amount plus the fee the mint actually charged; what
         *     the reserve did not use stays on the key. 400 `refund_address_missing` when the key has none, 402
         *     `refund_below_fee_reserve` when the balance does not cover one sat plus the fee reserve (or the
         *     address's minimum), 502 `refund_invoice_failed` when the callback gives no valid invoice for the
         *     amount, 503 when the payment is still pending at the mint (the balance stays held until the mint
         *     decides; the wallet's recovery pass settles it). Crash-safe: the melt is journalled with the hold it
         *     pays, so the invoice is never paid twice nor paid without a debit. Child keys cannot refund.
         */
        post: operations["refundWallet"];
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/v1/balance/refund": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        get?: never;
        put?: never;
        /**
         * Refund the remaining balance (stateless alternative)
         * @description Same as POST /v1/wallet/refund. The account is named by `Authorization` as usual, or, for a client
         *     that paid by sending a token as its bearer credential and kept only that token, by the body
         *     `{"cashu_token": "<the original token>"}` (its hash is the account identity). Refunding an identity
         *     whose balance is 0 answers 402 `payment_required`.
         */
        post: operations["refundBalance"];
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/v1/balance/child-key": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        get?: never;
        put?: never;
        /**
         * Create 1 to 50 child keys sharing this key's balance
         * @description Each child key costs a fixed, operator-configured fee (`CHILD_KEY_COST_MSATS`), debited from the
         *     parent all at once: either every key is created and paid or none. Child keys draw on the parent's
         *     balance, bounded by their own `balance_limit` per `balance_limit_reset` period and `validity_date`.
         *     A child key cannot create child keys.
         */
        post: operations["createChildKeys"];
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/v1/wallet/create/lightning": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        get?: never;
        put?: never;
        /**
         * Create a key paid by a Lightning invoice
         * @description The gateway takes a NUT-04 mint quote at its primary mint and answers the BOLT11 `invoice` to pay and
         *     an unguessable `id`. Once the invoice is paid the gateway mints the proofs and creates the key by
         *     itself (the client need not come back); `GET /v1/wallet/create/lightning/{id}` then returns the key.
         *     The `id` is a capability: whoever holds it receives the key, so keep it like a bearer token.
         *     `amount_sats` must be within LIGHTNING_MIN_SATS..LIGHTNING_MAX_SATS; at most
         *     LIGHTNING_CREATE_PER_MINUTE invoices per client IP per minute (429 with Retry-After).
         */
        post: operations["createWalletLightning"];
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/v1/wallet/create/lightning/{id}": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /**
         * State of a Lightning key creation (returns the key once issued)
         * @description `pending` (invoice unpaid), `paid` (being minted), `issued` (the key exists: `api_key` and the
         *     credited `msats`), `expired` (unpaid past its expiry; nothing was credited). Repeated reads return the
         *     same key; the deposit is credited once.
         */
        get: operations["getWalletLightning"];
        put?: never;
        post?: never;
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/v1/wallet/topup/lightning": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        get?: never;
        put?: never;
        /**
         * Top up the calling key by a Lightning invoice
         * @description As `POST /v1/wallet/create/lightning`, for the calling key (an API key; child keys cannot top up):
         *     once the invoice is paid the gateway credits `amount_sats × 1000` msats to it, once.
         */
        post: operations["topupWalletLightning"];
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/v1/wallet/topup/lightning/{id}": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /** State of a Lightning top-up */
        get: operations["getWalletTopupLightning"];
        put?: never;
        post?: never;
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/v1/wallet/create/subkey": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        get?: never;
        put?: never;
        /**
         * Create a restricted sub-key of the calling key
         * @description A sub-key spends from the parent's balance, limited to `balance_limit` msats in total, to the
         *     `allowed_models` (all when absent) and until `expires_in_hours` from now (never when absent).
         *     Authenticated with the parent key; a child key cannot create sub-keys.
         */
        post: operations["createSubkey"];
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/v1/wallet/update": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        get?: never;
        put?: never;
        /**
         * Set the calling key's IP allow-list and refund address
         * @description Each field given is replaced; a field left out is unchanged. `allowed_ips`: an empty list removes the
         *     restriction; later calls from an address outside the list get 403 `ip_not_allowed`.
         *
         *     `refund_address`: a Lightning address (`name@host`, LUD-16) the balance can be refunded to (POST
         *     /v1/wallet/refund with `{"to": "refund_address"}`) and that an expired key is swept to
         *     (EXPIRED_KEY_SWEEP). It is checked now by resolving its LNURL-pay endpoint
         *     (`https://host/.well-known/lnurlp/name`) under the webhook SSRF rules: 400 `refund_address_invalid`
         *     (not `name@host`), `refund_address_refused` (the host resolves to a private or reserved address, or a
         *     callback is not https), `refund_address_unresolvable` (no answer, not 200, not JSON, or an LNURL
         *     error), `refund_address_not_lnurl_pay` (the answer is not a valid payRequest). `null` clears it.
         */
        post: operations["updateWallet"];
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/v1/wallet/alerts": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /**
         * The calling key's alert settings
         * @description All fields are null until set. The webhook secret is never shown again.
         */
        get: operations["getWalletAlerts"];
        put?: never;
        /**
         * Set the calling key's alerts (balance.low, spend.daily_limit, key.expired)
         * @description Replaces the settings (a field left out or null is off). `balance.low` fires once when the account's
         *     balance falls below `low_balance_threshold` (msats) and re-arms only when a credit (a top-up) brings it
         *     to or above the threshold again, or a new threshold is set. `spend.daily_limit` fires once per UTC day when the key's spend that day (counted from when the
         *     limit is set; a parent's includes its child keys') reaches `daily_spend_limit` — an alert, not a block:
         *     calls go on. `key.expired` fires once when the key's expiry passes. Alerts go to `webhook_url` and to
         *     every webhook of the key (and of its parent) subscribed to the event. When `webhook_url` is new or
         *     changed, the answer carries `webhook_secret` (`whsec_…`), once: it signs the deliveries to that URL.
         *     The URL passes the same checks as `POST /v1/webhooks`.
         */
        post: operations["setWalletAlerts"];
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/v1/webhooks": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /** The calling key's webhooks */
        get: operations["listWebhooks"];
        put?: never;
        /**
         * Register a webhook
         * @description Events: `balance.low`, `key.expired`, `spend.daily_limit` (payloads: `WebhookEvent*` schemas, see
         *     docs/webhooks.md). A key receives its own events; a parent also receives its child keys' events.
         *     Deliveries are signed twice: Standard Webhooks (`webhook-id`, `webhook-timestamp`,
         *     `webhook-signature: v1,<base64>`, keyed with the `whsec_` secret) and
         *     `X-Webhook-Signature: sha256=<hex HMAC-SHA256 of the raw body keyed with the secret string as sent>`.
         *     The URL must be http(s) and resolve only to public addresses (400 `invalid_request` otherwise, unless the
         *     operator set WEBHOOK_ALLOW_PRIVATE_URLS). The secret is never returned or logged.
         */
        post: operations["createWebhook"];
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/v1/webhooks/{id}": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        get?: never;
        put?: never;
        post?: never;
        /** Delete one of the calling key's webhooks (its pending deliveries are dropped) */
        delete: operations["deleteWebhook"];
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/v1/webhooks/{id}/deliveries": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /** The webhook's delivery log, newest first (the last 100 attempts) */
        get: operations["listWebhookDeliveries"];
        put?: never;
        post?: never;
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/admin/": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /**
         * Admin dashboard (HTML)
         * @description A browser page; without a valid session (or `admin_password` cookie) it shows a login form that posts
         *     to POST /admin/login. When no ADMIN_PASSWORD is configured the page does not exist (404 `not_found`).
         */
        get: operations["getAdminDashboard"];
        put?: never;
        post?: never;
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/admin/api/settings": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /**
         * Current settings
         * @description Sensitive values (`upstream_api_key`) are redacted as `"[redacted]"` when set. When no ADMIN_PASSWORD is configured the admin API is disabled and answers 403 `forbidden`.
         */
        get: operations["getAdminSettings"];
        put?: never;
        post?: never;
        delete?: never;
        options?: never;
        head?: never;
        /**
         * Change some settings
         * @description A partial object of settings fields; unknown fields are refused. Validated, persisted and applied; the answer is the full (redacted) settings after the change.
         */
        patch: operations["updateAdminSettings"];
        trace?: never;
    };
    "/admin/api/audit": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /**
         * The node's audit log, newest first
         * @description Every audited request of the node (requests that named a key, admin changes, failed admin logins),
         *     filtered by key id, response status and time range.
         */
        get: operations["listAdminAudit"];
        put?: never;
        post?: never;
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/admin/assets/{name}": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /**
         * A static file of the admin console
         * @description The console's own script and style sheet and the uPlot charting library (served from the installed
         *     npm package; the page loads nothing from elsewhere). Public, like any static file: they hold no data.
         */
        get: operations["getAdminAsset"];
        put?: never;
        post?: never;
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/admin/api/overview": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /**
         * Node, ledger totals, the operator's wallet and the gateway overhead (the console's overview)
         * @description The ledger's totals and audit result, the proofs held per mint and unit (from the store, no mint call) and the gateway's own share of paid calls (p50, p99). A part whose store is unavailable carries `error` instead of figures.
         */
        get: operations["getAdminOverview"];
        put?: never;
        post?: never;
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/admin/api/timeseries": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /**
         * Paid calls, failed calls and charged msats per minute, hour or day
         * @description Counted by every gateway process sharing the store (each adds its counts every 10 s; a read adds the
         *     answering process's pending counts first). Calls are requests through the paid pipeline; errors those
         *     answered with a status ≥ 400. Every bucket of the range is present, oldest first (zero when idle).
         *     Minutes are kept 2 days, hours 90 days, days 3 years.
         */
        get: operations["getAdminTimeseries"];
        put?: never;
        post?: never;
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/admin/api/solvency": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /**
         * Solvency over time (msats held in proofs vs. msats owed to users)
         * @description Samples, oldest first: every 5 minutes from the store (proofs held per the wallet's store, user balances
         *     per the ledger; no mint call), plus one per solvency check run from the console (the mints' NUT-07
         *     answer). The last 10,000 samples are kept.
         */
        get: operations["getAdminSolvencySamples"];
        put?: never;
        post?: never;
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/admin/api/webhooks/deliveries": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /**
         * The node's latest webhook delivery attempts (newest first)
         * @description Every account's webhook and alert deliveries, newest first, for the console's Webhooks view: when, for
         *     which key and webhook, the receiver's origin (never its path or query), the attempt number, the receiver's
         *     HTTP status (null: no answer) and the error. `failed=true` keeps attempts without a 2xx answer, `key_id`
         *     those of one key's webhooks and alerts; `before` (a row's `id`) pages to older attempts while `has_more`.
         *     SQLite keeps each webhook's latest attempts (the view reaches the node's newest 5,000); Redis the node's
         *     last 1,000.
         */
        get: operations["listAdminWebhookDeliveries"];
        put?: never;
        post?: never;
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/admin/api/providers": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /**
         * Every provider's routing figures, breaker state and call outcomes (the console's Providers view)
         * @description The providers of the providers file (or the one upstream), in the file's order: routing policy,
         *     priority, weight, the measured time to the response head (EWMA, null until a call succeeded), the
         *     models it names (null: all), the circuit breaker's state, and this process's call outcomes and
         *     failovers since it started (the counters `/metrics` exposes). Never a provider's API key, its extra
         *     headers or anything of its base URL but the host.
         */
        get: operations["getAdminProviders"];
        put?: never;
        post?: never;
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/admin/api/network": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /**
         * The node's Nostr identity, its listing and each relay's last publication (the console's Network view)
         * @description The public key (never the secret), where the key came from (`config`: NOSTR_NSEC; `store`: made once and
         *     kept in the money store; `memory`: no store), the `d` tag and public URLs of the listing, the signed
         *     kind-38421 listing event as published, and per relay of `NOSTR_RELAYS` the last attempt, the last
         *     success, the relay's refusal or connection error, and when the next attempt is due after a failure.
         */
        get: operations["getAdminNetwork"];
        put?: never;
        post?: never;
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/admin/api/network/publish": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        get?: never;
        put?: never;
        /**
         * Send the listing to every relay now (the Network view's "Publish now")
         * @description One publication pass on the process that answers: the current listing (re-signed first when it changed or
         *     is older than NOSTR_REFRESH_HOURS) goes to every relay of `NOSTR_RELAYS` at once — a relay waiting out its
         *     backoff too, and a relay that holds it already (it answers OK again). A relay that fails gets its next
         *     backoff step, as after any failure. Answers when every relay answered or timed out (5 s), with the network
         *     view after the pass. Without relays nothing is sent. Needs `"confirm": true`.
         */
        post: operations["publishAdminNetworkListing"];
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/admin/api/keys/lookup": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        get?: never;
        put?: never;
        /**
         * One key's balance, usage, limits, children, transactions and audit records
         * @description Looks a key up by its public `key_id` or by the key itself (`sk-…`, in the body so it never lands in an access log); the answer shows the key only masked. Transactions and audit records are the newest `limit` of each (for a child key, its own). A key that does not exist or was deleted → 404 `not_found`.
         */
        post: operations["lookupAdminKey"];
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/admin/login": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        get?: never;
        put?: never;
        /**
         * Log in to the console (a session cookie)
         * @description Checks the password against ADMIN_PASSWORD and answers with a new session in the `admin_session`
         *     cookie: a random id (the store keeps only its hash, so a session works on every process sharing the
         *     store), `HttpOnly; SameSite=Strict; Path=/admin`, plus `Secure` when the request came over https per
         *     TRUSTED_PROXIES (`X-Forwarded-Proto` of a trusted proxy). It lasts ADMIN_SESSION_HOURS. A wrong
         *     password is 401 `admin_auth_required`; failed logins are limited per client IP
         *     (ADMIN_LOGIN_ATTEMPTS_PER_MINUTE, then 429). A browser request from another origin is 403 `forbidden`.
         */
        post: operations["adminLogin"];
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/admin/logout": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        get?: never;
        put?: never;
        /**
         * End the console session
         * @description Ends the session named by the `admin_session` cookie (if any) and clears the cookie. Same-origin only for browsers (403 `forbidden`).
         */
        post: operations["adminLogout"];
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/admin/api/keys/{key_id}": {
        parameters: {
            query?: never;
            header?: never;
            path: {
                /** @description The key's public id. */
                key_id: string;
            };
            cookie?: never;
        };
        get?: never;
        put?: never;
        post?: never;
        /**
         * Delete a key (optionally paying its balance out first)
         * @description Disables the key (as PATCH), then with `refund=true` pays every whole sat available out as an eCash
         *     token in the answer (the one pay-out step: hold, mint, commit), then deletes it; a parent key takes its
         *     account and every child with it. Without `refund` the balance stays counted on the deleted account.
         *     A refund while a call or withdrawal of the account is in flight is 409 `conflict` (nothing changed);
         *     a refund of a child key is 403 `child_key_forbidden` (it draws on its parent's balance). Audited.
         */
        delete: operations["deleteAdminKey"];
        options?: never;
        head?: never;
        /**
         * Disable or enable a key
         * @description `{"disabled": true}` refuses the key — and, for a parent key, every child of its account — with 401
         *     `key_disabled` on every process at once: the store refuses it from this step on, and every process's
         *     credit leases of the account are closed (their calls reported) before the answer. The balance is
         *     untouched (refund it with DELETE ?refund=true). `{"disabled": false}` enables it again. Audited.
         *     With credit leases, `applied_everywhere` says whether every process holding a lease of the account
         *     answered the recall before this answer; `false`: a process that did not answer in time may still admit
         *     calls of the key from its slice until its next lease step, at the latest until `applied_by`.
         */
        patch: operations["updateAdminKey"];
        trace?: never;
    };
    "/admin/api/actions/recovery": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        get?: never;
        put?: never;
        /**
         * Run the wallet's recovery pass now
         * @description Completes or rolls back wallet operations a crash or a mint outage left half done (the pass that also runs at start-up). Needs `"confirm": true`.
         */
        post: operations["runAdminRecovery"];
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/admin/api/actions/solvency-check": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        get?: never;
        put?: never;
        /**
         * Ask the mints which proofs are unspent and compare with the users' balances
         * @description The same check as `npm run wallet:solvency` (NUT-07 at every mint); the result is also recorded as a solvency sample. Needs `"confirm": true`.
         */
        post: operations["runAdminSolvencyCheck"];
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/admin/api/actions/payout": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        get?: never;
        put?: never;
        /**
         * Pay a Lightning invoice from the operator's proofs
         * @description The same payout as `npm run wallet:payout` (NUT-05 melt at `mint`, default the primary). Needs `"confirm": true`. Refused with 400 `payout_exceeds_surplus` (details: amount_msat, surplus_msat, proofs_msat, user_balances_msat) when the invoice's amount is larger than the operator surplus — proofs held (store figures) minus user balances — and 400 `invalid_request` for an invoice without an amount; nothing is paid then. The mint's fee reserve comes on top of the amount.
         */
        post: operations["runAdminPayout"];
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/admin/api/actions/payout/preview": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        get?: never;
        put?: never;
        /**
         * What a payout of this invoice would take, against the operator surplus (pays nothing)
         * @description The invoice's amount (from its BOLT11 human-readable part), the proofs held (store figures), the user balances and the surplus between them, and whether `POST /admin/api/actions/payout` would accept it. The console shows this in the payout's confirmation.
         */
        post: operations["previewAdminPayout"];
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/healthz": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /**
         * Liveness probe
         * @description Free; answers 200 while the process runs.
         */
        get: operations["getHealth"];
        put?: never;
        post?: never;
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/readyz": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /**
         * Readiness probe
         * @description Free. 200 only when this process should get traffic: it is not shutting down, the money store answers and
         *     the primary mint answers (when the node takes eCash). Otherwise 503 `service_unavailable` with
         *     `details.checks` (e.g. `{"store": "ok", "mint": "failing"}` or `{"lifecycle": "draining"}` after SIGTERM).
         *     On Redis, `redis` (also in `details` of a 503) names the form in use and how many of its nodes answer; a
         *     Redis Cluster that does not serve every slot (`cluster_state` not ok) makes the store `failing`.
         *     Checks are cached for one second.
         */
        get: operations["getReadiness"];
        put?: never;
        post?: never;
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/metrics": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /**
         * Prometheus metrics
         * @description Prometheus text exposition format. With METRICS_TOKEN set it requires `Authorization: Bearer
         *     <METRICS_TOKEN>` (else 401 `metrics_auth_required`, with `WWW-Authenticate: Bearer`). Without it, it
         *     answers loopback clients only (the client address per TRUSTED_PROXIES; others get 403 `forbidden`),
         *     and the start-up log says how to open it.
         */
        get: operations["getMetrics"];
        put?: never;
        post?: never;
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/openapi.json": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /** This document as JSON */
        get: operations["getOpenApiDocument"];
        put?: never;
        post?: never;
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/docs": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /**
         * Interactive documentation (Swagger UI)
         * @description Served from the installed swagger-ui-dist package (assets under /docs/), no CDN.
         */
        get: operations["getSwaggerUi"];
        put?: never;
        post?: never;
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/redoc": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /**
         * Interactive documentation (ReDoc)
         * @description Served from the installed redoc package (/redoc/redoc.standalone.js), no CDN.
         */
        get: operations["getRedoc"];
        put?: never;
        post?: never;
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/v1/{path}": {
        parameters: {
            query?: never;
            header?: never;
            path: {
                /** @description The rest of the path after /v1/, slashes included (e.g. `images/variations`). */
                path: string;
            };
            cookie?: never;
        };
        /** Relay a GET upstream */
        get: operations["proxyGet"];
        /** Relay a PUT upstream */
        put: operations["proxyPut"];
        /** Relay a POST upstream */
        post: operations["proxyPost"];
        /** Relay a DELETE upstream */
        delete: operations["proxyDelete"];
        options?: never;
        head?: never;
        /** Relay a PATCH upstream */
        patch: operations["proxyPatch"];
        trace?: never;
    };
}
export type webhooks = Record<string, never>;
export interface components {
    schemas: {
        /** @description The answer to an MPP session `topUp` credential (security scheme MppPayment); no call is made. */
        MppTopUpAnswer: {
            /** @enum {string} */
            status: "ok";
        };
        /**
         * @description The answer to an MPP session `close` credential (security scheme MppPayment): the session is closed once
         *     and the rest of its balance paid to the return invoice; a repeated close answers the same.
         */
        MppCloseAnswer: {
            /** @enum {string} */
            status: "closed";
            /** @description Sats paid (or being paid) to the return invoice. */
            refundSats: number;
            /**
             * @description `succeeded`; `skipped` (under one sat available, or nothing fits beside the mint's fee reserve); `failed`
             *     (nothing was paid: the balance stays, refundable with the bearer credential through POST
             *     /v1/wallet/refund); `pending` (the payment is in flight at the mint; the balance stays held until the
             *     mint decides).
             * @enum {string}
             */
            refundStatus: "succeeded" | "failed" | "skipped" | "pending";
        };
        Health: {
            /** @enum {string} */
            status: "ok";
            /** @description The process that answered (with WORKERS > 1, which worker). */
            pid?: number;
        };
        Readiness: {
            /** @enum {string} */
            status: "ready";
            /** @description Each dependency's state (`ok`, `not_configured`). */
            checks: {
                [key: string]: "ok" | "failing" | "not_configured" | "draining";
            };
            redis?: components["schemas"]["RedisNodes"];
            /**
             * @description Present when `HTTP_ENGINE=uws` was asked for and node:http serves instead: the uWebSockets.js binary
             *     could not load on this platform (no uWS build on the npm registry loads on Node 22 or 24 with glibc
             *     2.36; README, "HTTP engines"). `reason` says why (the Node version, ABI and the loader's error).
             */
            engine?: {
                /** @enum {string} */
                requested: "uws";
                /** @enum {string} */
                serving: "node";
                reason: string;
            };
        };
        /**
         * @description The Redis of the money store (absent on SQLite): `form` is `single` (REDIS_URL), `cluster`
         *     (REDIS_CLUSTER_NODES) or `sentinel` (REDIS_SENTINELS); `nodes` how many data nodes it knows of (a
         *     cluster's masters and replicas, failed ones included; a master and its replicas), `answering` how many
         *     of them are up. Never an address or a credential.
         */
        RedisNodes: {
            /** @enum {string} */
            form: "single" | "cluster" | "sentinel";
            nodes: number;
            answering: number;
        };
        /**
         * @description Every error code the gateway answers with (core/errors.ts is the catalogue; a test keeps the two
         *     equal). Each code has one HTTP status; see the ErrorNNN schemas and the responses.
         * @enum {string}
         */
        ErrorCode: "invalid_request" | "invalid_json" | "validation_failed" | "model_not_priced" | "tool_not_priced" | "service_tier_not_priced" | "context_not_bounded" | "reference_not_bounded" | "invalid_token" | "token_already_spent" | "mint_not_trusted" | "unsupported_unit" | "token_amount_too_small" | "swap_fee_too_high" | "payout_exceeds_surplus" | "refund_address_invalid" | "refund_address_refused" | "refund_address_unresolvable" | "refund_address_not_lnurl_pay" | "refund_address_missing" | "refund_below_fee_reserve" | "refund_invoice_failed" | "missing_credentials" | "invalid_api_key" | "key_expired" | "invalid_payment_credential" | "payment_credential_expired" | "key_disabled" | "admin_auth_required" | "metrics_auth_required" | "payment_required" | "invoice_not_paid" | "insufficient_balance" | "forbidden" | "ip_not_allowed" | "model_not_allowed" | "child_key_forbidden" | "not_found" | "endpoint_not_enabled" | "method_not_allowed" | "request_timeout" | "token_pending" | "conflict" | "payout_in_progress" | "payload_too_large" | "unsupported_media_type" | "rate_limit_exceeded" | "too_many_sessions" | "headers_too_large" | "internal_error" | "not_implemented" | "upstream_error" | "batch_outcome_unknown" | "service_unavailable" | "store_unavailable" | "balance_in_transit" | "mint_unavailable" | "operator_wallet_insufficient" | "price_unavailable" | "upstream_timeout" | "http_version_not_supported";
        /**
         * @description The error's family. `conflict` (409) and `not_implemented` (501) extend the interface's list;
         *     a 503 is `service_unavailable`.
         * @enum {string}
         */
        ErrorType: "invalid_request" | "authentication_failed" | "insufficient_balance" | "forbidden" | "not_found" | "conflict" | "rate_limit_exceeded" | "headers_too_large" | "internal_error" | "not_implemented" | "upstream_error" | "service_unavailable";
        ErrorObject: {
            type: components["schemas"]["ErrorType"];
            /** @description Human-readable; never contains tokens, keys or secrets. */
            message: string;
            code: components["schemas"]["ErrorCode"];
            /** @description Code-specific facts (see the *Details schemas). */
            details?: {
                [key: string]: unknown;
            };
        };
        /** @description The error envelope of every error answer. */
        Error: {
            error: components["schemas"]["ErrorObject"];
        };
        /** @description Details of `validation_failed`. */
        ValidationFailedDetails: {
            /** @description The first offending field, as a path (`messages[0].role`); `body` for the body itself. */
            field: string;
            errors: {
                field: string;
                message: string;
            }[];
        };
        /** @description Details of `key_expired`. */
        KeyExpiredDetails: {
            /** Format: date-time */
            expired_at: string;
        };
        /** @description Details of `payment_required`, integers in msats; `shortfall` = `required` − `balance`. */
        PaymentRequiredDetails: {
            /** @description What is available (balance minus reserved, or the X-Cashu token's value), msats. */
            balance: number;
            /** @description The least the call needs reserved, msats. */
            required: number;
            /** @description How much is missing, msats. */
            shortfall: number;
            /**
             * @description Chat, completions and responses calls without `max_tokens`: the most completion tokens the balance
             *     pays for with this prompt, at the requested `service_tier` and with a declared web search call (0:
             *     not even the prompt and a minimal answer). Absent otherwise.
             */
            affordable_max_tokens?: number;
            /**
             * @description An unpaid call (or a Lightning door's short balance) on a node offering a Lightning door: the amount
             *     each offer asks, sats — the call's reservation bound, at least `L402_MIN_SATS` (README "Paying").
             */
            amount_sats?: number;
            /** @description `amount_sats` in msats. */
            amount_msats?: number;
            /**
             * @description One entry per payment door offered (`PAYMENT_DOORS`), in the order of the answer's headers: `cashu`
             *     (the NUT-18 request also in `X-Cashu`), `mpp` and `l402` (their challenges in `WWW-Authenticate`; one
             *     invoice for both).
             */
            payment_options?: components["schemas"]["PaymentOption"][];
        };
        /** @description One way to pay an unpaid call (README "Paying"). */
        PaymentOption: {
            /** @enum {string} */
            door: "cashu" | "l402" | "mpp";
            /** @description The response header carrying this offer (`X-Cashu` or `WWW-Authenticate`). */
            header: string;
            /** @description The `WWW-Authenticate` scheme (`L402`, `Payment`). */
            scheme?: string;
            /** @description `cashu`: the NUT-18 payment request (`creqA…`). */
            payment_request?: string;
            /** @description `l402`, `mpp`: the BOLT11 invoice (a quote of the primary mint). */
            invoice?: string;
            /** @description `l402`: the macaroon to present with the preimage (`Authorization: L402 <macaroon>:<preimage>`). */
            macaroon?: string;
        };
        /** @description Details of `rate_limit_exceeded`. */
        RateLimitDetails: {
            limit_type?: components["schemas"]["RateLimitType"];
            limit?: number;
            remaining?: number;
            /** @description Unix time in seconds when the window ends. */
            reset?: number;
        };
        /** @enum {string} */
        RateLimitType: "requests_per_minute" | "tokens_per_hour" | "concurrent_requests" | "requests_per_hour" | "requests_per_day";
        /** @description The error envelope of an HTTP 400 answer. */
        Error400: {
            error: components["schemas"]["ErrorObject"] & {
                /** @enum {string} */
                type?: "invalid_request";
                /** @enum {string} */
                code?: "invalid_request" | "invalid_json" | "validation_failed" | "invalid_token" | "token_already_spent" | "mint_not_trusted" | "unsupported_unit" | "token_amount_too_small" | "swap_fee_too_high" | "model_not_priced" | "tool_not_priced" | "service_tier_not_priced" | "context_not_bounded" | "reference_not_bounded" | "payout_exceeds_surplus" | "refund_address_invalid" | "refund_address_refused" | "refund_address_unresolvable" | "refund_address_not_lnurl_pay" | "refund_address_missing";
            };
        };
        /** @description The error envelope of an HTTP 401 answer. */
        Error401: {
            error: components["schemas"]["ErrorObject"] & {
                /** @enum {string} */
                type?: "authentication_failed";
                /** @enum {string} */
                code?: "missing_credentials" | "invalid_api_key" | "key_expired" | "invalid_payment_credential" | "payment_credential_expired" | "key_disabled" | "admin_auth_required" | "metrics_auth_required";
                details?: components["schemas"]["KeyExpiredDetails"];
            };
        };
        /** @description The error envelope of an HTTP 402 answer. */
        Error402: {
            error: components["schemas"]["ErrorObject"] & {
                /** @enum {string} */
                type?: "insufficient_balance";
                /** @enum {string} */
                code?: "payment_required" | "insufficient_balance" | "refund_below_fee_reserve" | "invoice_not_paid";
                details?: components["schemas"]["PaymentRequiredDetails"];
            };
        };
        /** @description The error envelope of an HTTP 403 answer. */
        Error403: {
            error: components["schemas"]["ErrorObject"] & {
                /** @enum {string} */
                type?: "forbidden";
                /** @enum {string} */
                code?: "forbidden" | "ip_not_allowed" | "model_not_allowed" | "child_key_forbidden";
            };
        };
        /** @description The error envelope of an HTTP 404 answer. */
        Error404: {
            error: components["schemas"]["ErrorObject"] & {
                /** @enum {string} */
                type?: "not_found";
                /** @enum {string} */
                code?: "not_found" | "endpoint_not_enabled";
            };
        };
        /** @description The error envelope of an HTTP 405 answer. */
        Error405: {
            error: components["schemas"]["ErrorObject"] & {
                /** @enum {string} */
                type?: "invalid_request";
                /** @enum {string} */
                code?: "method_not_allowed";
            };
        };
        /** @description The error envelope of an HTTP 408 answer. */
        Error408: {
            error: components["schemas"]["ErrorObject"] & {
                /** @enum {string} */
                type?: "invalid_request";
                /** @enum {string} */
                code?: "request_timeout";
            };
        };
        /** @description The error envelope of an HTTP 409 answer. */
        Error409: {
            error: components["schemas"]["ErrorObject"] & {
                /** @enum {string} */
                type?: "conflict";
                /** @enum {string} */
                code?: "token_pending" | "conflict" | "payout_in_progress";
            };
        };
        /** @description The error envelope of an HTTP 413 answer. */
        Error413: {
            error: components["schemas"]["ErrorObject"] & {
                /** @enum {string} */
                type?: "invalid_request";
                /** @enum {string} */
                code?: "payload_too_large";
            };
        };
        /** @description The error envelope of an HTTP 415 answer. */
        Error415: {
            error: components["schemas"]["ErrorObject"] & {
                /** @enum {string} */
                type?: "invalid_request";
                /** @enum {string} */
                code?: "unsupported_media_type";
            };
        };
        /** @description The error envelope of an HTTP 431 answer. */
        Error431: {
            error: components["schemas"]["ErrorObject"] & {
                /** @enum {string} */
                type?: "invalid_request";
                /** @enum {string} */
                code?: "headers_too_large";
            };
        };
        /** @description The error envelope of an HTTP 429 answer. */
        Error429: {
            error: components["schemas"]["ErrorObject"] & {
                /** @enum {string} */
                type?: "rate_limit_exceeded";
                /** @enum {string} */
                code?: "rate_limit_exceeded" | "too_many_sessions";
                details?: components["schemas"]["RateLimitDetails"];
            };
        };
        /** @description The error envelope of an HTTP 500 answer. */
        Error500: {
            error: components["schemas"]["ErrorObject"] & {
                /** @enum {string} */
                type?: "internal_error";
                /** @enum {string} */
                code?: "internal_error";
            };
        };
        /** @description The error envelope of an HTTP 501 answer. */
        Error501: {
            error: components["schemas"]["ErrorObject"] & {
                /** @enum {string} */
                type?: "not_implemented";
                /** @enum {string} */
                code?: "not_implemented";
            };
        };
        /** @description The error envelope of an HTTP 502 answer. */
        Error502: {
            error: components["schemas"]["ErrorObject"] & {
                /** @enum {string} */
                type?: "upstream_error";
                /** @enum {string} */
                code?: "upstream_error" | "refund_invoice_failed" | "batch_outcome_unknown";
            };
        };
        /** @description The error envelope of an HTTP 503 answer. */
        Error503: {
            error: components["schemas"]["ErrorObject"] & {
                /** @enum {string} */
                type?: "service_unavailable";
                /** @enum {string} */
                code?: "service_unavailable" | "store_unavailable" | "balance_in_transit" | "mint_unavailable" | "operator_wallet_insufficient" | "price_unavailable";
            };
        };
        /** @description The error envelope of an HTTP 505 answer. */
        Error505: {
            error: components["schemas"]["ErrorObject"] & {
                /** @enum {string} */
                type?: "invalid_request";
                /** @enum {string} */
                code?: "http_version_not_supported";
            };
        };
        /** @description The error envelope of an HTTP 504 answer. */
        Error504: {
            error: components["schemas"]["ErrorObject"] & {
                /** @enum {string} */
                type?: "upstream_error";
                /** @enum {string} */
                code?: "upstream_timeout";
            };
        };
        /** @description The `gateway.cost` server event a Realtime session gets after each `response.done`. */
        RealtimeGatewayCost: {
            /** @enum {string} */
            type: "gateway.cost";
            event_id: string;
            /** @description What the response and the transcriptions since were charged. */
            msats: number;
            sats: number;
            /** @description true when the provider never reported the response's usage (its socket dropped). */
            estimated: boolean;
            breakdown: {
                prompt_cost?: number;
                completion_cost?: number;
                fees?: number;
                dimensions?: components["schemas"]["CostDimensions"];
            };
            transcription_msats?: number;
            /** @description Charged in this session so far. */
            session_msats: number;
            /** @description What the key can still spend, after the next response's reservation. */
            balance_msats?: number | null;
        };
        /** @description An `error` server event of the gateway's own (then the socket closes with the code named in /v1/realtime). */
        RealtimeGatewayError: {
            /** @enum {string} */
            type: "error";
            event_id?: string;
            error: {
                /** @enum {string} */
                type: "gateway_error";
                /** @description `insufficient_balance`, `upstream_error`, `invalid_json`, `invalid_request`, or a store error code. */
                code: string;
                message: string;
                details?: {
                    balance?: number;
                    needed?: number;
                };
            };
        };
        /**
         * @description OpenAI chat completion request. Unknown extra fields are allowed and relayed (providers add their
         *     own). `model` is required: there is no automatic routing.
         */
        ChatCompletionRequest: {
            /** @description A model id from GET /v1/models. */
            model: string;
            messages: components["schemas"]["ChatMessage"][];
            /** @default 1 */
            temperature: number | null;
            /**
             * @description Upper bound of completion tokens (model default when absent). It bounds the reservation; when the
             *     balance cannot afford it, the gateway lowers it to what the balance affords.
             */
            max_tokens?: number | null;
            /** @description The newer OpenAI name of `max_tokens`; treated the same way. */
            max_completion_tokens?: number | null;
            /** @default false */
            stream: boolean | null;
            stream_options?: ({
                /** @description The gateway sets it upstream to meter streams; the client gets the usage chunk too. */
                include_usage?: boolean;
            } & {
                [key: string]: unknown;
            }) | null;
            /** @default 1 */
            top_p: number | null;
            /** @description Only some models. */
            top_k?: number | null;
            /** @default 1 */
            n: number | null;
            stop?: (string | string[]) | null;
            /** @default 0 */
            presence_penalty: number | null;
            /** @default 0 */
            frequency_penalty: number | null;
            seed?: number | null;
            user?: string;
            tools?: ({
                type: string;
            } & {
                [key: string]: unknown;
            })[];
            tool_choice?: string | {
                [key: string]: unknown;
            };
            response_format?: {
                type: string;
            } & {
                [key: string]: unknown;
            };
        } & {
            [key: string]: unknown;
        };
        ChatMessage: {
            /** @enum {string} */
            role: "system" | "developer" | "user" | "assistant" | "tool" | "function";
            /** @description Text, or an array of parts. May be null on assistant messages with tool calls. */
            content?: (string | components["schemas"]["ContentPart"][]) | null;
            name?: string;
            tool_calls?: {
                [key: string]: unknown;
            }[];
            tool_call_id?: string;
        } & {
            [key: string]: unknown;
        };
        /** @description `{type: text, text}`, `{type: image_url, image_url: {url}}`, or another part type the model supports. */
        ContentPart: {
            type: string;
            text?: string;
            image_url?: {
                url: string;
                /** @enum {string} */
                detail?: "auto" | "low" | "high";
            } & {
                [key: string]: unknown;
            };
        } & {
            [key: string]: unknown;
        };
        Usage: {
            prompt_tokens: number;
            completion_tokens?: number;
            total_tokens: number;
        } & {
            [key: string]: unknown;
        };
        /**
         * @description What this call cost (the `x-node-cost` body field of non-stream completions). `msats` is what was
         *     charged; `sats` is it rounded up to whole sats; `usd` is its value at the BTC price used (display
         *     only); the breakdown parts are msats and sum to `msats`. `estimated` is true when the upstream
         *     reported no usage and the token counts were estimated by the gateway.
         */
        NodeCost: {
            sats: number;
            msats: number;
            usd: number;
            /**
             * @description msats. `prompt_cost` is what the input dimensions (uncached input, cache reads and writes, audio and
             *     image input) were charged, `completion_cost` the output dimensions (text, reasoning, audio output),
             *     `fees` the rest (request price, web search calls, base fee, rounding): the three sum to `msats`.
             *     `dimensions` names each charged dimension; its values sum to `msats` as well.
             */
            breakdown: {
                prompt_cost: number;
                completion_cost: number;
                fees: number;
                dimensions?: components["schemas"]["CostDimensions"];
                /**
                 * @description Calls paid with a `sat` token (X-Cashu, or the token as the bearer): msats added to round the
                 *     charge up to whole sats (the X-Cashu change, or a refund of the token at POST
                 *     /v1/balance/refund, is then all the rest). Absent when nothing was rounded.
                 */
                unit_rounding?: number;
            };
            estimated: boolean;
            /** @description The provider that served the call (after any failover), as /v1/providers names it. */
            provider?: string;
            /**
             * @description Only with NODE_COST_UPSTREAM=true (off by default: every caller would see the reseller's cost): what a
             *     call served by another node paid from this node's wallet (`"payment": "cashu"` or `"cashu-balance"`)
             *     cost the operator there. The admin audit records carry it whatever the setting.
             */
            upstream_msats?: number;
        };
        ChatCompletion: {
            id: string;
            /** @enum {string} */
            object: "chat.completion";
            created: number;
            model: string;
            choices: ({
                index: number;
                message: {
                    role: string;
                    content?: string | null;
                } & {
                    [key: string]: unknown;
                };
                /** @description `stop`, `length`, `tool_calls`, `content_filter`, … */
                finish_reason?: string | null;
            } & {
                [key: string]: unknown;
            })[];
            usage?: components["schemas"]["Usage"];
            "x-node-cost"?: components["schemas"]["NodeCost"];
        } & {
            [key: string]: unknown;
        };
        /** @description One `data:` event of a chat completion stream. */
        ChatCompletionChunk: {
            id: string;
            /** @enum {string} */
            object: "chat.completion.chunk";
            created: number;
            model: string;
            choices: ({
                index: number;
                delta: {
                    role?: string;
                    content?: string | null;
                } & {
                    [key: string]: unknown;
                };
                finish_reason?: string | null;
            } & {
                [key: string]: unknown;
            })[];
            /** @description In the last chunk when `stream_options.include_usage` is set. */
            usage?: components["schemas"]["Usage"] | null;
        } & {
            [key: string]: unknown;
        };
        /** @description OpenAI (legacy) completion request; unknown extra fields are relayed. */
        CompletionRequest: {
            model: string;
            prompt: string | string[] | number[] | number[][];
            max_tokens?: number | null;
            temperature?: number | null;
            top_p?: number | null;
            n?: number | null;
            stream?: boolean | null;
            stop?: (string | string[]) | null;
            presence_penalty?: number | null;
            frequency_penalty?: number | null;
            logprobs?: number | null;
            echo?: boolean | null;
            suffix?: string | null;
        } & {
            [key: string]: unknown;
        };
        Completion: {
            id: string;
            /** @enum {string} */
            object: "text_completion";
            created: number;
            model: string;
            choices: ({
                text: string;
                index: number;
                logprobs?: {
                    [key: string]: unknown;
                } | null;
                finish_reason?: string | null;
            } & {
                [key: string]: unknown;
            })[];
            usage?: components["schemas"]["Usage"];
            "x-node-cost"?: components["schemas"]["NodeCost"];
        } & {
            [key: string]: unknown;
        };
        /** @description OpenAI embeddings request; unknown extra fields are relayed. */
        EmbeddingRequest: {
            model: string;
            input: string | string[] | number[] | number[][];
            /**
             * @default float
             * @enum {string}
             */
            encoding_format: "float" | "base64";
            dimensions?: number;
            user?: string;
        } & {
            [key: string]: unknown;
        };
        EmbeddingList: {
            /** @enum {string} */
            object: "list";
            data: ({
                /** @enum {string} */
                object: "embedding";
                index: number;
                /** @description Numbers, or a base64 string when `encoding_format` is `base64`. */
                embedding: number[] | string;
            } & {
                [key: string]: unknown;
            })[];
            model: string;
            usage?: components["schemas"]["Usage"];
            "x-node-cost"?: components["schemas"]["NodeCost"];
        } & {
            [key: string]: unknown;
        };
        /** @description Anthropic Messages API request; relayed unchanged after these checks. */
        MessagesRequest: {
            model: string;
            max_tokens: number;
            messages: ({
                /** @enum {string} */
                role: "user" | "assistant";
                content: string | {
                    [key: string]: unknown;
                }[];
            } & {
                [key: string]: unknown;
            })[];
            system?: string | {
                [key: string]: unknown;
            }[];
            stream?: boolean;
        } & {
            [key: string]: unknown;
        };
        /** @description Anthropic's token-counting request (`/v1/messages/count_tokens`). */
        CountTokensRequest: {
            model: string;
            messages: {
                [key: string]: unknown;
            }[];
        } & {
            [key: string]: unknown;
        };
        /**
         * @description The error shape of the Anthropic Messages routes, as Anthropic SDKs parse it: `error.type` is Anthropic's
         *     (`invalid_request_error` 400, `authentication_error` 401, `billing_error` 402, `permission_error` 403,
         *     `not_found_error` 404, `request_too_large` 413, `rate_limit_error` 429, `api_error` 500/502,
         *     `overloaded_error` 503, `timeout_error` 504); `code` and `details` are this node's (see the error codes).
         */
        AnthropicErrorEnvelope: {
            /** @enum {string} */
            type: "error";
            error: {
                type: string;
                message: string;
                code: string;
                details?: {
                    [key: string]: unknown;
                };
            };
        };
        /** @description OpenAI Responses API request; relayed unchanged except the checks below. */
        ResponseRequest: {
            model: string;
            input?: string | {
                [key: string]: unknown;
            }[];
            instructions?: string | null;
            max_output_tokens?: number | null;
            temperature?: number | null;
            top_p?: number | null;
            stream?: boolean | null;
        } & {
            [key: string]: unknown;
        };
        ResponseObject: {
            id: string;
            /** @enum {string} */
            object: "response";
            created_at?: number;
            model: string;
            output?: {
                [key: string]: unknown;
            }[];
            usage?: {
                input_tokens?: number;
                output_tokens?: number;
                total_tokens?: number;
            } & {
                [key: string]: unknown;
            };
            "x-node-cost"?: components["schemas"]["NodeCost"];
        } & {
            [key: string]: unknown;
        };
        /** @description OpenAI image generation request; unknown extra fields are relayed. */
        ImageGenerationRequest: {
            model: string;
            prompt: string;
            /** @default 1 */
            n: number;
            /**
             * @description Absent, the call is priced as 1024x1024 (the API's default size).
             * @default 1024x1024
             */
            size: string;
            /**
             * @default standard
             * @enum {string}
             */
            quality: "standard" | "hd" | "auto" | "low" | "medium" | "high";
            /**
             * @default vivid
             * @enum {string}
             */
            style: "vivid" | "natural";
            /**
             * @default url
             * @enum {string}
             */
            response_format: "url" | "b64_json";
            /** @description `true` is refused with 400 `invalid_request` before anything is reserved: a streamed image answer cannot be charged per image returned. Image edits (multipart) follow the same rule. */
            stream?: boolean;
        } & {
            [key: string]: unknown;
        };
        /** @description OpenAI text-to-speech request; unknown extra fields are relayed. */
        SpeechRequest: {
            model: string;
            input: string;
            voice?: string;
            /** @enum {string} */
            response_format?: "mp3" | "opus" | "aac" | "flac" | "wav" | "pcm";
            speed?: number;
        } & {
            [key: string]: unknown;
        };
        ImageUploadRequest: {
            /** Format: binary */
            image: string;
            /** Format: binary */
            mask?: string;
            model: string;
            prompt?: string;
            n?: number;
            size?: string;
            quality?: string;
        };
        ImageList: {
            created: number;
            data: ({
                url?: string;
                b64_json?: string;
                revised_prompt?: string;
            } & {
                [key: string]: unknown;
            })[];
        } & {
            [key: string]: unknown;
        };
        /** @description Multipart form of the audio endpoints (relayed unchanged). */
        AudioRequest: {
            /**
             * Format: binary
             * @description mp3, mp4, mpeg, mpga, m4a, wav or webm.
             */
            file: string;
            model: string;
            /** @description ISO-639-1 (transcriptions only). */
            language?: string;
            prompt?: string;
            /**
             * @default json
             * @enum {string}
             */
            response_format: "json" | "text" | "srt" | "verbose_json" | "vtt";
            temperature?: number;
        };
        AudioText: {
            text: string;
        } & {
            [key: string]: unknown;
        };
        /**
         * @description What the caller pays per 1,000 tokens, in US dollars (the multiplier of the pricing model
         *     included). Display only: calls are charged in msats at the BTC price of the moment.
         */
        ModelPricing: {
            prompt: number | null;
            completion: number | null;
            /** @enum {string} */
            unit?: "1k tokens";
            /** @description USD per 1,000 cached input tokens read */
            input_cache_read?: number;
            /** @description USD per 1,000 input tokens written to the cache (5-minute lifetime) */
            input_cache_write?: number;
            /** @description USD per 1,000 input tokens written to the cache for 1 hour */
            input_cache_write_1h?: number;
            /** @description USD per 1,000 reasoning tokens */
            internal_reasoning?: number;
            /** @description USD per 1,000 audio input tokens */
            input_audio?: number;
            /** @description USD per 1,000 audio input tokens read from the prompt cache (Realtime sessions) */
            input_audio_cache_read?: number;
            /** @description USD per 1,000 audio output tokens */
            output_audio?: number;
            /** @description USD per 1,000 image input tokens */
            input_image?: number;
            /** @description USD per web search call */
            web_search?: number;
            /** @description USD per 1,000 image output tokens of the image_generation tool */
            image_output?: number;
            /** @description USD per code_interpreter container */
            code_interpreter?: number;
            /** @description USD per file_search call */
            file_search?: number;
            /** @description Multiplier on the whole call's provider price by the service tier the provider reports. */
            service_tiers?: {
                [key: string]: number;
            };
            /** @description Where the prices came from (the price book's `source`). */
            source?: string;
            /** @description When they were taken (the price book's `updated_at`). */
            updated_at?: string;
            /**
             * @description What each usage dimension is charged, msats per 1,000 tokens (`web_search`: per call), with the
             *     node's multiplier; a dimension without its own price shows its base rate (prompt, completion,
             *     request), which is what it is charged. Null while no fresh BTC price exists (model pricing).
             */
            dimension_msats?: {
                [key: string]: number;
            } | null;
        } & {
            [key: string]: unknown;
        };
        Model: {
            id: string;
            /** @enum {string} */
            object: "model";
            /** @description Unix time, seconds. */
            created: number;
            owned_by: string;
            permission?: {
                [key: string]: unknown;
            }[];
            root?: string;
            parent?: string | null;
            pricing?: components["schemas"]["ModelPricing"];
            context_length?: number | null;
        } & {
            [key: string]: unknown;
        };
        ModelList: {
            /** @enum {string} */
            object: "list";
            data: components["schemas"]["Model"][];
        };
        NodeInfo: {
            name: string;
            description: string;
            /** @description The gateway's version. */
            version: string;
            /** @description The node's Nostr public key (NIP-19 `npub1…`), derived from `NOSTR_NSEC` or from the key the node made once and keeps in its money store — the key its listing is signed with. When `NODE_NPUB` is set and `NOSTR_NSEC` is not, that display value instead. */
            npub: string;
            /** @description The Cashu mints whose tokens this node accepts. */
            mints: string[];
            /**
             * @description How an unpaid call can be paid here (`PAYMENT_DOORS`, README "Paying"): `cashu` (NUT-24 `X-Cashu`),
             *     `l402` (`WWW-Authenticate: L402`), `mpp` (`WWW-Authenticate: Payment`, Lightning `charge`). Empty
             *     on a node without a wallet.
             */
            payment_doors?: ("cashu" | "l402" | "mpp")[];
            /** @description The models, keyed by id. */
            models: {
                [key: string]: components["schemas"]["Model"];
            };
        };
        ProviderSummary: {
            name: string;
            models: string[];
            endpoints: string[];
            status: components["schemas"]["ProviderStatus"];
            /** @description Lower is tried first (routing policy `priority`). */
            priority?: number;
            weight?: number;
            /** @description The routing policy that orders this node's providers by default (ROUTING_POLICY): `priority`, `weighted`, `cheapest`, `latency`, or a name a plugin registered. */
            routing?: string;
        };
        /**
         * @description From the provider's circuit breaker: `down` while open (after consecutive failures): no call is sent to it until its cool-down ends, calls skip it and go to the model's other providers, and when every provider of a model is open a call fails at once with 502 `upstream_error` ("All providers of model … are unavailable", `details.providers` naming them) and is charged nothing. `degraded` once the cool-down ended (exactly one call probes it, the others skip it meanwhile; success closes the breaker, failure opens it again) or after failures since the last success; else `active`. Breakers are kept per gateway process. With the one-provider shorthand (UPSTREAM_BASE_URL, no PROVIDERS_PATH) the breaker only reports this status and calls are still sent.
         * @enum {string}
         */
        ProviderStatus: "active" | "degraded" | "down";
        ProviderList: {
            providers: components["schemas"]["ProviderSummary"][];
        };
        ProviderDetail: {
            name: string;
            display_name: string;
            description: string;
            models: {
                id: string;
                name: string;
                context_window?: number | null;
                /** @description What a call this provider serves is charged: under model-based pricing its own `pricing` from the providers file where it declares one for the model (over the price book's, with the charged msats), else the price book's USD prices as GET /v1/models shows them. */
                pricing?: components["schemas"]["ModelPricing"];
            }[];
            endpoints: string[];
            features: string[];
            status: components["schemas"]["ProviderStatus"];
            priority?: number;
            weight?: number;
            /** @description Moving average of the time to the response head (routing policy `latency`), ms. */
            ttfb_ms?: number | null;
        };
        EstimateRequest: {
            model: string;
            prompt_tokens: number;
            max_tokens: number;
            /**
             * @description Of `prompt_tokens`, how many the provider will read from its prompt cache: priced at the model's
             *     `input_cache_read` (its `prompt` price when it has none). At most `prompt_tokens`.
             */
            cached_tokens?: number;
        };
        /**
         * @description Each charged dimension in msats, named as the price book names its prices (OpenRouter's names):
         *     `prompt` (uncached input), `input_cache_read`, `input_cache_write`, `input_cache_write_1h`, `input_audio`,
         *     `input_audio_cache_read` (Realtime), `input_image`, `completion` (text output), `internal_reasoning`, `output_audio`, `web_search` (calls),
         *     `image_output` (image_generation tool output tokens), `code_interpreter` (containers), `file_search` (calls),
         *     `request`, `units` (images, audio milliseconds, speech characters) and `fees` (the base fee
         *     `FIXED_COST_PER_REQUEST` and the one rounding up). Only the dimensions a call used appear; the values
         *     sum to the charge. Each is charged at the multiplied rate (fees and service tier included), rounded down.
         */
        CostDimensions: {
            fees?: number;
        } & {
            [key: string]: number;
        };
        Estimate: {
            /** @description Whole sats, rounded up. */
            estimated_cost_sats: number;
            estimated_cost_msats: number;
            /**
             * @description In msats; `prompt` + `completion` + `fees` sum to `estimated_cost_msats`, and so do the `dimensions`.
             *     `prompt` and `completion` are what the input and output dimensions are charged; `fees` the rest.
             */
            breakdown: {
                prompt: number;
                completion: number;
                fees: number;
                dimensions: components["schemas"]["CostDimensions"];
            };
        };
        /** @description A serialized Cashu eCash token (`cashuA…` v3 or `cashuB…` v4). */
        CashuTokenString: string;
        /** @description An API key, `sk-` followed by 29 characters (32 in all). */
        ApiKey: string;
        WalletCreateRequest: {
            cashu_token: components["schemas"]["CashuTokenString"];
            /** @description Accepted for compatibility with one published variant and ignored (no admin keys). */
            admin_key?: string;
        };
        /** @description Key creation. */
        WalletCreated: {
            api_key: components["schemas"]["ApiKey"];
            /** @description msats credited (what the mint swap yielded). */
            balance: number;
            /** Format: date-time */
            created_at: string;
            /** @description A public id of the key (safe to log and show; not a credential). */
            key_id: string;
            /** @description msats credited from the token (what arrived after its mint's fees). */
            msats: number;
            /** @description What redeeming the token cost, msats: the mint's input fee, or for a foreign-mint token swapped to the primary mint (FOREIGN_MINTS=swap) the swap cost (input fee + Lightning fee reserve, less the fee change the foreign mint returned, which is swapped over too, net of that second swap's own cost); `msats + fee_msats` is the token's face value. */
            fee_msats: number;
            /** @description The mint the token came from, present only when its value was swapped to the primary mint. */
            swapped_from?: string;
        };
        /** @description Balance, with `reserved`. Amounts in msats. */
        WalletBalance: {
            balance: number;
            /** @description Held by calls in flight; `balance − reserved` is what can be spent now. */
            reserved: number;
            total_deposited: number;
            total_spent: number;
            /** Format: date-time */
            last_used: string | null;
            /** Format: date-time */
            created_at: string;
            /** Format: date-time */
            expires_at: string | null;
            key_info: {
                name: string | null;
                key_id: string;
            };
        };
        /** @description Account information (GET /v1/wallet/). Amounts in msats. */
        WalletAccount: {
            key_id: string;
            balance: number;
            reserved: number;
            /** @description `balance − reserved`: what can be spent now (for a child key, also within its limit). */
            available?: number;
            total_deposited: number;
            total_spent: number;
            total_requests: number;
            /** Format: date-time */
            created_at: string;
            /** Format: date-time */
            expires_at: string | null;
            is_child: boolean;
        };
        ChildKeyInfo: {
            /** @description The child key, shortened (never shown in full after creation). */
            api_key: string;
            key_id?: string;
            total_requests: number;
            total_spent: number;
            balance_limit: number | null;
            balance_limit_reset: components["schemas"]["LimitReset"];
            /** @description Unix time in seconds after which the key stops working. */
            validity_date: number | null;
        };
        /**
         * @description Period after which a child key's spending against `balance_limit` starts again (null = never).
         * @enum {string|null}
         */
        LimitReset: "daily" | "weekly" | "monthly" | null;
        /** @description Key information. Amounts in msats. */
        BalanceInfo: {
            /** @description The key, shortened (e.g. `sk-abcd…wxyz`). */
            api_key: string;
            key_id?: string;
            balance: number;
            reserved: number;
            /** @description What this key can spend now (balance − reserved, and within a child key's limit). */
            available?: number;
            is_child: boolean;
            /** @description The parent key, shortened, for a child key. */
            parent_key: string | null;
            total_requests: number;
            total_spent: number;
            balance_limit: number | null;
            balance_limit_reset: components["schemas"]["LimitReset"];
            validity_date: number | null;
            child_keys: components["schemas"]["ChildKeyInfo"][];
        };
        /** @description The token, unless it is sent as the query parameter `cashu_token` (exactly one of the two). */
        TopupRequest: {
            cashu_token?: components["schemas"]["CashuTokenString"];
        };
        /** @description Top-up. Amounts in msats. */
        TopupResult: {
            old_balance: number;
            added_amount: number;
            new_balance: number;
            transaction_id: string;
            /** @description msats credited from the token (what arrived after its mint's fees). */
            msats: number;
            /** @description What redeeming the token cost, msats: the mint's input fee, or for a foreign-mint token swapped to the primary mint (FOREIGN_MINTS=swap) the swap cost (input fee + Lightning fee reserve, less the fee change the foreign mint returned, which is swapped over too, net of that second swap's own cost); `msats + fee_msats` is the token's face value. */
            fee_msats: number;
            /** @description The mint the token came from, present only when its value was swapped to the primary mint. */
            swapped_from?: string;
        };
        FileUploadRequest: {
            /** @description `batch` (checked and priced); other purposes only with FILES_OTHER_PURPOSES=true. */
            purpose: string;
            /**
             * Format: binary
             * @description For `batch`, JSONL of `{custom_id, method, url, body}` lines.
             */
            file: string;
        };
        /** @description The provider's file object, relayed as it is. */
        FileObject: {
            id: string;
            /** @example file */
            object?: string;
            bytes?: number;
            created_at?: number;
            filename?: string;
            purpose?: string;
        } & {
            [key: string]: unknown;
        };
        FileList: {
            /** @example list */
            object?: string;
            data: components["schemas"]["FileObject"][];
            /** @description The page's first id. */
            first_id?: string | null;
            /** @description The page's last id (the next page's `after`). */
            last_id?: string | null;
            /** @description More of the key's objects follow this page. */
            has_more?: boolean;
        } & {
            [key: string]: unknown;
        };
        DeletedObject: {
            id?: string;
            object?: string;
            deleted?: boolean;
        } & {
            [key: string]: unknown;
        };
        /** @description The provider's object, relayed as it is. */
        ProviderObject: {
            [key: string]: unknown;
        };
        BatchCreateRequest: {
            /** @description A file of the calling key uploaded with purpose `batch`. */
            input_file_id: string;
            /**
             * @description Must be the `url` of the input file's lines.
             * @enum {string}
             */
            endpoint: "/v1/chat/completions" | "/v1/completions" | "/v1/embeddings" | "/v1/responses";
            /** @enum {string} */
            completion_window: "24h";
            metadata?: {
                [key: string]: string;
            } | null;
        } & {
            [key: string]: unknown;
        };
        /** @description The provider's batch object, relayed as it is. */
        BatchObject: {
            id: string;
            /** @example batch */
            object?: string;
            endpoint?: string;
            input_file_id?: string;
            /** @enum {string} */
            status?: "validating" | "failed" | "in_progress" | "finalizing" | "completed" | "expired" | "cancelling" | "cancelled";
            output_file_id?: string | null;
            error_file_id?: string | null;
            request_counts?: {
                total?: number;
                completed?: number;
                failed?: number;
            } & {
                [key: string]: unknown;
            };
        } & {
            [key: string]: unknown;
        };
        BatchList: {
            /** @example list */
            object?: string;
            data: components["schemas"]["BatchObject"][];
            /** @description The page's first id. */
            first_id?: string | null;
            /** @description The page's last id (the next page's `after`). */
            last_id?: string | null;
            /** @description More of the key's objects follow this page. */
            has_more?: boolean;
        } & {
            [key: string]: unknown;
        };
        /**
         * @description `deposit` (token credited), `usage` (a call charged), `withdrawal` (token withdrawn), `child_key_fee`
         *     (child key creation), `refund` (balance refunded as a token), `batch` (a Batch API job settled: the
         *     description names the batch id and its line counts).
         * @enum {string}
         */
        TransactionType: "deposit" | "usage" | "withdrawal" | "child_key_fee" | "refund" | "batch";
        Transaction: {
            id: string;
            type: components["schemas"]["TransactionType"];
            /** @description msats; negative for usage, fees, withdrawals and refunds, positive for deposits. */
            amount: number;
            balance_after: number;
            /** @description For usage, names the model and the prompt and completion token counts. */
            description: string;
            /** Format: date-time */
            timestamp: string;
        };
        /** @description One audit record (the interface's field names, plus `request_id`, `cost_msats`, `kind` and the cursor `id`). */
        AuditRecord: {
            /** @description Cursor of this record (pass as `before`). */
            id: string;
            /** Format: date-time */
            timestamp: string;
            request_id: string;
            /** @description The key's public `key_id`; null for admin records. */
            api_key_id: string | null;
            endpoint: string;
            method: string;
            ip_address: string;
            user_agent: string | null;
            cost_sats: number;
            cost_msats: number;
            /** @description The HTTP status answered (0 when the client left before any). */
            response_status: number;
            /** @enum {string} */
            kind: "key" | "admin";
            /** @description Admin readers only (`/admin/api/audit`, a key's admin view): a call served by another node paid from the operator's wallet (a provider with `"payment": "cashu"` or `"cashu-balance"`, docs/providers.md) — what it cost the operator there (the token sent less the change returned, or the cost the node stated for the prepaid key). Absent for every other record and from the key's own reader (`/v1/wallet/audit`). */
            upstream_msats?: number;
            /** @description The request's OpenTelemetry trace id (README, "Tracing"): present when tracing is on (an OTLP endpoint set), the client's own when it sent a `traceparent`. */
            trace_id?: string;
        };
        AuditList: {
            data: components["schemas"]["AuditRecord"][];
            has_more: boolean;
            /**
             * @description The cursor of the next page (pass as `before`); null when `has_more` is false. Usually the last
             *     record's `id`. On Redis a filtered read scans at most 20,000 entries: when that budget runs out
             *     before the page is full, the page holds fewer than `limit` records (possibly none), `has_more` is
             *     true and `next_before` continues the scan — a filter never silently misses records.
             */
            next_before: string | null;
        };
        TransactionList: {
            /** @description Newest first. */
            transactions: components["schemas"]["Transaction"][];
            has_more: boolean;
            total: number;
        };
        WithdrawRequest: {
            /** @description Sats to withdraw (default every whole sat of the available balance). */
            amount?: number;
            /**
             * Format: uri
             * @description A mint this node trusts (default the primary mint).
             */
            mint?: string;
        };
        WithdrawResult: {
            cashu_token: components["schemas"]["CashuTokenString"];
            /**
             * @description The token's value in whole sats (rounded down for an `msat` token, which carries every msat; 0 when
             *     that is less than a sat).
             */
            amount: number;
            /** Format: uri */
            mint: string;
            /**
             * @description The token's keyset unit (amounts are reported in sats either way). A refund of an account named by
             *     an `msat` eCash token (Bearer, or `cashu_token` at /v1/balance/refund) is an `msat` token of the
             *     whole balance, to the msat; every other withdrawal is whole sats.
             * @enum {string}
             */
            unit: "sat" | "msat";
            /** @description msats left on the key. */
            balance: number;
        };
        KeyDeleted: {
            key_id: string;
            deleted: boolean;
            /** @description The balance paid out (null when nothing was paid out). */
            refund: components["schemas"]["WithdrawResult"] | null;
            /** @description What stays on the deleted account (the sub-sat remainder; everything without a refund). */
            left_msats: number;
        };
        /** @description No fields; an empty object or no body at all. */
        EmptyBody: Record<string, never>;
        BalanceRefundRequest: {
            cashu_token?: components["schemas"]["CashuTokenString"];
        };
        ChildKeyRequest: {
            count: number;
            /** @description msats each child may spend per `balance_limit_reset` period (null = the parent's balance). */
            balance_limit?: number | null;
            balance_limit_reset?: components["schemas"]["LimitReset"];
            /** @description Unix time in seconds after which the children stop working. */
            validity_date?: number | null;
        };
        ChildKeysCreated: {
            api_keys: components["schemas"]["ApiKey"][];
            count: number;
            cost_msats: number;
            /** @description `cost_msats` in sats, rounded up. */
            cost_sats: number;
            /** @description msats. */
            parent_balance: number;
            /** @description `parent_balance` in whole sats, rounded down. */
            parent_balance_sats: number;
        };
        LightningCreateRequest: {
            amount_sats: number;
            name?: string;
        };
        LightningTopupRequest: {
            amount_sats: number;
        };
        LightningDeposit: {
            /** @description Capability naming this deposit (not the mint's quote id); keep it secret. */
            id: string;
            /** @enum {string} */
            status: "pending" | "paid" | "issued" | "expired";
            amount_sats: number;
            /** @description The BOLT11 invoice to pay. */
            invoice: string;
            /** Format: date-time */
            expires_at: string | null;
            /** @description Credited msats, once issued. */
            msats?: number;
            /** @description Create only, once issued. Shown to whoever holds `id`. */
            api_key?: string;
        };
        SubkeyRequest: {
            name?: string;
            /** @description msats the sub-key may spend in total (null = the parent's balance). */
            balance_limit?: number | null;
            allowed_models?: string[] | null;
            expires_in_hours?: number | null;
        };
        SubkeyCreated: {
            api_key: components["schemas"]["ApiKey"];
            key_id: string;
            name: string | null;
            balance_limit: number | null;
            allowed_models: string[] | null;
            /** Format: date-time */
            expires_at: string | null;
            /** @description The creation fee debited from the parent (`CHILD_KEY_COST_MSATS`). */
            cost_msats?: number;
            /** @description The parent's balance after the fee, msats. */
            parent_balance?: number;
        };
        /** @description An IPv4 or IPv6 address, or a CIDR range. */
        IpOrCidr: string;
        WalletUpdateRequest: {
            allowed_ips?: components["schemas"]["IpOrCidr"][];
            /**
             * @description A Lightning address `name@host`; null clears it.
             * @example alice@wallet.example.com
             */
            refund_address?: string | null;
        };
        WalletUpdated: {
            key_id: string;
            allowed_ips: string[];
            /** @description The key's Lightning address (lower-cased), or null. */
            refund_address: string | null;
        };
        /** @description No fields (an eCash token), or `to` naming the key's refund address. */
        WalletRefundRequest: {
            /** @enum {string} */
            to?: "refund_address";
        };
        LightningRefundResult: {
            /** @description The Lightning address paid. */
            refund_address: string;
            /** @description What the invoice paid to the address (whole sats, in msats). */
            amount_msats: number;
            /** @description The fee the mint charged for the payment (Lightning routing + its input fee), debited with the amount. */
            fee_msats: number;
            /** @description The Lightning fee reserve the mint held for the payment; what it did not use stays on the key. */
            fee_reserve_msats: number;
            /** @description msats left on the key. */
            balance: number;
            /** @description The payment's preimage, when the mint reports one (proof of payment). */
            payment_preimage: string | null;
            /** Format: uri */
            mint: string;
        };
        WalletAlertsRequest: {
            /** @description msats; null = off. */
            low_balance_threshold?: number | null;
            /** @description msats per UTC day; null = off. An alert, not a block. */
            daily_spend_limit?: number | null;
            /** Format: uri */
            webhook_url?: string | null;
        };
        WalletAlerts: {
            low_balance_threshold: number | null;
            daily_spend_limit: number | null;
            webhook_url: string | null;
            /** @description Only in the answer that set a new webhook_url; signs its deliveries. */
            webhook_secret?: string;
        };
        /** @enum {string} */
        WebhookEventType: "balance.low" | "key.expired" | "spend.daily_limit" | "batch.completed";
        WebhookRequest: {
            /** Format: uri */
            url: string;
            events: components["schemas"]["WebhookEventType"][];
            /** @description A Standard Webhooks secret (`whsec_` + base64 of at least 16 bytes). Never returned. */
            secret: string;
        };
        Webhook: {
            id: string;
            url: string;
            events: components["schemas"]["WebhookEventType"][];
            /** Format: date-time */
            created_at: string;
            /** @description true after the receiver answered 410 Gone (nothing more is sent). */
            disabled?: boolean;
        };
        WebhookList: {
            data: components["schemas"]["Webhook"][];
            has_more: boolean;
        };
        WebhookDeleted: {
            id: string;
            /** @enum {boolean} */
            deleted: true;
        };
        WebhookDelivery: {
            attempt: number;
            /** Format: date-time */
            at: string;
            /** @description The receiver's HTTP status; null when it did not answer. */
            status: number | null;
            error: string | null;
        };
        WebhookDeliveryList: {
            data: components["schemas"]["WebhookDelivery"][];
            has_more: boolean;
        };
        /** @description Body of a balance.low delivery (`data.balance` and `data.threshold` in msats). */
        WebhookEventBalanceLow: {
            /** @description Event id; also the webhook-id header (the same on retries). */
            id: string;
            /** @enum {string} */
            type: "balance.low";
            /** Format: date-time */
            created_at: string;
            data: {
                key_id: string;
                balance: number;
                threshold: number;
            };
        };
        /** @description Body of a spend.daily_limit delivery (msats; `day` is the UTC date). */
        WebhookEventSpendDailyLimit: {
            id: string;
            /** @enum {string} */
            type: "spend.daily_limit";
            /** Format: date-time */
            created_at: string;
            data: {
                key_id: string;
                /** Format: date */
                day: string;
                spent: number;
                limit: number;
            };
        };
        /**
         * @description Body of a batch.completed delivery: a batch of the key ended (any terminal status) and was settled.
         *     `charged_msats` is the `batch` transaction's amount; the rest of `reserved_msats` was released.
         */
        WebhookEventBatchCompleted: {
            id: string;
            /** @enum {string} */
            type: "batch.completed";
            /** Format: date-time */
            created_at: string;
            data: {
                key_id: string;
                batch_id: string;
                /** @enum {string} */
                status: "completed" | "failed" | "expired" | "cancelled";
                lines: number;
                answered: number;
                failed: number;
                charged_msats: number;
                reserved_msats: number;
                transaction_id: string;
            };
        };
        /** @description Body of a key.expired delivery. */
        WebhookEventKeyExpired: {
            id: string;
            /** @enum {string} */
            type: "key.expired";
            /** Format: date-time */
            created_at: string;
            data: {
                key_id: string;
                /** Format: date-time */
                expired_at: string;
            };
        };
        AdminLogin: {
            password: string;
        };
        AdminLoginResult: {
            /**
             * Format: date-time
             * @description When the session ends (ADMIN_SESSION_HOURS from now).
             */
            expires_at: string;
        };
        AdminKeyPatch: {
            disabled: boolean;
        };
        AdminConfirm: {
            /**
             * @description Must be true (the console asks the operator first).
             * @enum {boolean}
             */
            confirm: true;
        };
        AdminPayoutRequest: {
            /** @enum {boolean} */
            confirm: true;
            /** @description A BOLT11 invoice with an amount. */
            invoice: string;
            /** @description One of CASHU_MINTS; default the primary mint. */
            mint?: string;
        };
        AdminPayoutPreviewRequest: {
            invoice: string;
        };
        AdminPayoutPreview: {
            amount_msat: number;
            /** @description Proofs the wallet holds at every mint (store figures, no mint call). */
            proofs_msat: number;
            user_balances_msat: number;
            /** @description proofs_msat − user_balances_msat (negative when the node owes more than it holds). */
            surplus_msat: number;
            /** @description amount_msat ≤ surplus_msat. */
            allowed: boolean;
        };
        AdminDeliveryList: {
            data: {
                /** @description The attempt's cursor (`before` of the next page). */
                id: string;
                /** @description ms since the epoch. */
                at: number;
                key_id: string | null;
                webhook_id: string;
                /** @enum {string|null} */
                kind: "webhook" | "alert" | null;
                origin: string | null;
                attempt: number;
                status: number | null;
                error: string | null;
            }[];
            has_more: boolean;
        };
        NostrEvent: {
            id: string;
            pubkey: string;
            created_at: number;
            kind: number;
            tags: string[][];
            content: string;
            sig: string;
        };
        AdminNetwork: {
            /** @description The node key's public key (NIP-19), the author of the listing. */
            npub: string;
            pubkey: string;
            /**
             * @description Where the key came from: `config` NOSTR_NSEC; `store` made once and kept in the money store (every process and restart on it signs with it); `memory` made for this process only (no store).
             * @enum {string}
             */
            key_source: "config" | "store" | "memory";
            /** @description NODE_NPUB (the `node_npub` setting) while `/v1/info` shows it instead of `npub`: set, and NOSTR_NSEC unset. A display value only: it names no key this node signs with. Null otherwise. */
            display_npub: string | null;
            /** @description The listing's `d` tag (NOSTR_NODE_ID, else the first 12 hex characters of the public key). */
            node_id: string;
            /** @description The listing content's `name` (NODE_NAME). */
            name: string;
            /** @description The listing content's `about` (NODE_DESCRIPTION). */
            about: string;
            public_urls: string[];
            /** @description The trusted mints the listing announces (its `mint` tags, CASHU_MINTS). */
            mints: string[];
            listing: components["schemas"]["NostrEvent"];
            /**
             * Format: date-time
             * @description When a relay last accepted the listing (the latest `last_success_at`); null before any did.
             */
            last_published_at: string | null;
            relays: {
                /** @description The relay URL without credentials or query. */
                relay: string;
                /** @description The last attempt's result; null before the first. */
                ok: boolean | null;
                /** Format: date-time */
                last_attempt_at: string | null;
                /** Format: date-time */
                last_success_at: string | null;
                last_error: string | null;
                /**
                 * Format: date-time
                 * @description After a failure, when the relay is tried again (backoff 5 s doubling to 15 min).
                 */
                next_attempt_at: string | null;
                /** @description The listing event the relay last accepted. */
                event_id: string | null;
            }[];
            /** @description Every provider of the providers file with a `payment` mode (another Cashu-priced node paid with eCash), in the file's order, with what it cost the operator. The figures are this process's since it started, read from the counters `/metrics` exposes (with WORKERS, `/metrics` sums every worker). */
            paid_nodes: components["schemas"]["AdminPaidNode"][];
        };
        AdminPaidNode: {
            name: string;
            /** @description The base URL's scheme, host and port only (a path or query may carry a credential). */
            origin: string;
            /** @description The providers file's `payment` (`cashu`: a token from the operator's wallet per call; `cashu-balance`: a prepaid key kept at the node, topped up from the wallet, whose `paid_msats` is the cost the node stated per call). */
            payment: string;
            status: components["schemas"]["ProviderStatus"];
            calls: components["schemas"]["ProviderCalls"];
            /** @description What the node kept: tokens sent minus change redeemed, the operator's cost (`gateway_upstream_paid_msats_total`). */
            paid_msats: number;
            /** @description eCash sent to the node that came back neither as an answer nor as change (`gateway_upstream_lost_msats_total`, every reason). */
            lost_msats: number;
            /** @description `lost_msats` by reason: `no_answer` (the node redeemed the token and failed), `change_pending` (change the node could not make: it waits there), `change_unredeemable` (change this node cannot redeem, e.g. from a mint it does not trust). Reasons with no loss are absent. */
            lost_by_reason: {
                [key: string]: number;
            };
            /** @description Change (or a token taken back) that could not be redeemed at once and went to the background retry (`gateway_upstream_change_retries_total`). */
            change_retries: number;
        };
        AdminProviders: {
            /**
             * @description ROUTING_POLICY (a model may have its own in the providers file).
             * @enum {string}
             */
            routing_policy: "priority" | "weighted" | "cheapest" | "latency";
            providers: {
                name: string;
                /** @description The base URL's host (and port) only. */
                host: string;
                status: components["schemas"]["ProviderStatus"];
                priority: number;
                weight: number;
                ttfb_ms: number | null;
                models: string[] | null;
                breaker: {
                    /**
                     * @description closed — calls go through; open — skipped until `retry_at`; half_open — the next call is a probe.
                     * @enum {string}
                     */
                    state: "closed" | "open" | "half_open";
                    consecutive_failures: number;
                    /** @description ms since the epoch. */
                    opened_at: number | null;
                    /** @description ms since the epoch (while open). */
                    retry_at: number | null;
                };
                calls: components["schemas"]["ProviderCalls"];
                /** @description Calls moved on to the next provider after this one failed before the first byte. */
                failovers: number;
            }[];
        };
        /** @description Calls this process sent to a provider since it started, by outcome (`gateway_provider_requests_total`): `ok` a response head the call used, `error` no answer (connect error, timeout) or — for a node paid with eCash — its token refused, `status_5xx`, `status_429`. */
        ProviderCalls: {
            ok: number;
            error: number;
            status_5xx: number;
            status_429: number;
        };
        /** @description Exactly one of `api_key` (the key itself) and `key_id` (its public id, as audit records, transactions, logs and the other admin answers show it). */
        AdminKeyLookup: {
            api_key?: string;
            /** @description A key's public id (16 lowercase hex characters). */
            key_id?: string;
            /**
             * @description How many transactions and audit records (newest first).
             * @default 20
             */
            limit: number;
        } & (unknown | unknown);
        /** @description The key after a PATCH (AdminKeyMeta), and whether every gateway process has applied the change. */
        AdminKeyPatchResult: components["schemas"]["AdminKeyMeta"] & {
            /** @description true when every process holding a credit lease of the key's account answered the recall before this answer (a disabled key is then admitted nowhere); false when some did not within the wait. */
            applied_everywhere: boolean;
            /** @description When applied_everywhere is false: ms since the epoch by which the last unanswered lease expires, so every process has applied the change (null otherwise). */
            applied_by: number | null;
        };
        AdminKeyMeta: {
            key_id: string;
            /** @description Disabled by the operator (PATCH /admin/api/keys/{key_id}); a disabled parent key also refuses its children. */
            disabled: boolean;
            /** @description The key masked. */
            display_key: string;
            name: string | null;
            is_child: boolean;
            parent_key_id: string | null;
            /** @description ms since the epoch */
            created_at: number;
            expires_at: number | null;
            allowed_models: string[] | null;
            allowed_ips: string[] | null;
            /** @description msats */
            balance_limit: number | null;
            balance_limit_reset: string | null;
            validity_date: number | null;
            total_requests: number;
            /** @description msats */
            total_spent: number;
            /** @description msats in the current limit period */
            period_spent: number;
            /** @description msats held by calls in flight */
            reserved: number;
            /** @description ms since the epoch */
            last_used: number | null;
        };
        AdminKeyInfo: {
            key: components["schemas"]["AdminKeyMeta"];
            /** @description The key's alert settings (POST /v1/wallet/alerts); null when none were set. */
            alerts: {
                low_balance_threshold: number | null;
                daily_spend_limit: number | null;
                /** @description The alert receiver's origin only (never its path or query). */
                webhook_origin: string | null;
            } | null;
            /** @description The key's webhooks (receivers by origin only). */
            webhooks: {
                id: string;
                origin: string | null;
                events: string[];
                disabled: boolean;
                created_at: number;
            }[];
            account: {
                balance: number;
                reserved: number;
                deposited: number;
                spent: number;
                withdrawn: number;
                fees: number;
                requests: number;
                created_at: number;
            };
            /** @description What the key can spend now, msats. */
            available: number;
            children: components["schemas"]["AdminKeyMeta"][];
            transactions: {
                id: string;
                type: string;
                /** @description Signed msats. */
                amount: number;
                balance_after: number;
                description: string;
                timestamp: number;
                key_id: string | null;
                model: string | null;
            }[];
            audit: {
                timestamp: number;
                key_id: string;
                request_id: string;
                endpoint: string;
                method: string;
                status: number;
                cost_msats: number;
            }[];
        };
        AdminOverview: {
            /** @description The gateway's own share of paid calls since the process started (every worker's with WORKERS), from the `gateway_overhead_seconds` histogram — a call's duration minus the upstream wait — as quantiles estimated from the buckets (as Prometheus' histogram_quantile does). */
            overhead: {
                calls: number;
                p50_ms: number | null;
                p99_ms: number | null;
            };
            node: {
                name: string;
                description: string;
                version: string;
                npub: string;
                mints: string[];
            };
            audit: {
                ok: boolean;
                accounts: number;
                breaches: number;
                /** @description Ledger totals in msats (balance, reserved, spent, deposited, withdrawn, …). */
                totals: {
                    [key: string]: number;
                };
            } | components["schemas"]["AdminPartError"];
            wallet: {
                mint: string;
                unit: string;
                /** @description Proofs held, in unit. */
                amount: number;
                amount_msat: number;
                /** @description Part of amount reserved by sends in flight. */
                reserved: number;
                proofs: number;
            }[] | components["schemas"]["AdminPartError"];
            /** @description Lightning payouts of held balances (refunds to a Lightning address, the expired-key sweep) whose melt is undecided or whose hold is not settled yet, oldest first; absent without a wallet. */
            open_payouts?: {
                payout_id: string;
                /** @enum {string} */
                state: "pending" | "paid" | "failed";
                /** Format: date-time */
                since: string;
            }[] | components["schemas"]["AdminPartError"];
        };
        AdminPartError: {
            /** @description Why this part has no figures (store or wallet unavailable or absent). */
            error: string;
        };
        AdminTimeseries: {
            /** @enum {string} */
            granularity: "minute" | "hour" | "day";
            bucket_ms: number;
            points: {
                /** @description Bucket start, ms since the epoch. */
                t: number;
                calls: number;
                errors: number;
                charged_msats: number;
            }[];
        };
        AdminSolvencySamples: {
            samples: {
                /** @description ms since the epoch. */
                t: number;
                proofs_msat: number;
                user_balances_msat: number;
            }[];
        };
        AdminRecoveryReport: {
            examined: number;
            receives_completed: number;
            /** @description Of the receives completed, those credited where their caller meant to (the caller's process had died or lost the mint's answer): no need for the client to present the token again. */
            receipts_credited?: number;
            rolled_back: number;
            outputs_restored: number;
            /** @description Entries left for a later pass. */
            deferred: number;
            /** @description Entries left to the live gateway that wrote them. */
            live_owners?: number;
        };
        AdminSolvencyReport: {
            solvent: boolean;
            /** @description Value of the proofs the mints report unspent. */
            proofs_msat: number;
            pending_msat: number;
            /** @description Proofs held that the mints report spent (should be 0). */
            spent_msat: number;
            user_balances_msat: number;
            per_mint: {
                mint: string;
                unit: string;
                unspent_msat: number;
                pending_msat: number;
                spent_msat: number;
            }[];
        };
        AdminPayoutResult: {
            amount_msat: number;
            fee_msat: number;
            preimage: string | null;
            mint: string;
            unit: string;
            quote: string;
        };
        /**
         * @description The operator settings (the interface's operator variables and the others), named after their environment
         *     variables in lower case. Secrets (`admin_password`, `upstream_api_key`, `cashu_seed`, passwords inside
         *     `redis_url` / `upstream_base_url`) are `"[redacted]"` when set and null when not, never their value.
         *     `runtime_changeable` lists what PATCH may change; the rest needs the variable set and a restart.
         */
        AdminSettings: {
            upstream_base_url?: string;
            upstream_api_key?: string | null;
            admin_password?: string | null;
            fixed_pricing?: boolean;
            /** @description Sats per request. */
            fixed_cost_per_request?: number;
            /** @description Sats per 1,000 prompt tokens (token-based pricing). */
            fixed_per_1k_input_tokens?: number | null;
            /** @description Sats per 1,000 completion tokens (token-based pricing). */
            fixed_per_1k_output_tokens?: number | null;
            exchange_fee?: number;
            upstream_provider_fee?: number;
            /** @description A fixed BTC price in USD (BTC_USD_PRICE), when configured. */
            btc_usd_price?: number | null;
            pricing_mode?: string | null;
            child_key_cost_msats?: number;
            node_name?: string;
            node_description?: string;
            node_npub?: string;
            cashu_mints?: string[];
            cashu_seed?: string | null;
            redis_url?: string | null;
            /** @description The balance store in use (SQLite or Redis). */
            store?: string | null;
            rate_limit_requests_per_minute?: number;
            rate_limit_tokens_per_hour?: number;
            rate_limit_concurrent?: number;
            max_body_bytes?: number;
            http_engine?: string;
            runtime_changeable?: string[];
            /** @description The settings version this process applied last (0 = none changed since the store began). Every PATCH bumps it; every process sharing the store applies it within 2 s and logs it. */
            version?: number;
        } & {
            [key: string]: unknown;
        };
        /**
         * @description Any subset of the settings; unknown fields are refused. Only the `runtime_changeable` ones may
         *     change (pricing numbers, `child_key_cost_msats`, node name/description/npub); `upstream_base_url`,
         *     `upstream_api_key` and `cashu_mints` are accepted only unchanged (`"[redacted]"` keeps the key),
         *     otherwise 400: they need a restart.
         */
        AdminSettingsPatch: {
            /** Format: uri */
            upstream_base_url?: string;
            upstream_api_key?: string | null;
            fixed_pricing?: boolean;
            fixed_cost_per_request?: number;
            fixed_per_1k_input_tokens?: number | null;
            fixed_per_1k_output_tokens?: number | null;
            exchange_fee?: number;
            upstream_provider_fee?: number;
            child_key_cost_msats?: number;
            node_name?: string;
            node_description?: string;
            node_npub?: string;
            cashu_mints?: string[];
        };
    };
    responses: {
        /** @description An error on the Anthropic Messages routes, in Anthropic's shape (carrying this node's `code`). */
        AnthropicError: {
            headers: {
                "X-Request-ID": components["headers"]["X-Request-ID"];
                [name: string]: unknown;
            };
            content: {
                /**
                 * @example {
                 *       "type": "error",
                 *       "error": {
                 *         "type": "billing_error",
                 *         "code": "payment_required",
                 *         "message": "Insufficient balance"
                 *       }
                 *     }
                 */
                "application/json": components["schemas"]["AnthropicErrorEnvelope"];
            };
        };
        /**
         * @description Malformed request (type `invalid_request`). Codes: `invalid_request`, `invalid_json` (message gives the
         *     position), `validation_failed` (message names the field, e.g. `messages: must be array`; details
         *     `{field, errors}`), and for eCash tokens `invalid_token`, `token_already_spent`, `mint_not_trusted`,
         *     `unsupported_unit`, `token_amount_too_small`, `swap_fee_too_high` (FOREIGN_MINTS=swap); `model_not_priced` when the price book (models.json or the
         *     provider's list) has no price for the model on that endpoint (an image model without `image`/`image_sizes`,
         *     a chat model without `prompt`/`completion`): refused before anything is reserved, never relayed free.
         */
        BadRequest: {
            headers: {
                "X-Request-ID": components["headers"]["X-Request-ID"];
                "X-Cashu": components["headers"]["X-Cashu-Change"];
                "X-Cashu-Change": components["headers"]["X-Cashu-Change-Status"];
                [name: string]: unknown;
            };
            content: {
                /**
                 * @example {
                 *       "error": {
                 *         "type": "invalid_request",
                 *         "code": "validation_failed",
                 *         "message": "messages: must be array",
                 *         "details": {
                 *           "field": "messages",
                 *           "errors": [
                 *             {
                 *               "field": "messages",
                 *               "message": "must be array"
                 *             }
                 *           ]
                 *         }
                 *       }
                 *     }
                 */
                "application/json": components["schemas"]["Error400"];
            };
        };
        /**
         * @description Missing, unknown, deleted or expired credentials (type `authentication_failed`). Codes:
         *     `missing_credentials` (with a NUT-18 payment request in `X-Cashu`), `invalid_api_key`, `key_expired`
         *     (details `expired_at`), `key_disabled` (the operator disabled the key or its parent key),
         *     `admin_auth_required` (admin endpoints), `metrics_auth_required` (`/metrics` with METRICS_TOKEN set).
         */
        Unauthorized: {
            headers: {
                "X-Request-ID": components["headers"]["X-Request-ID"];
                "X-Cashu": components["headers"]["X-Cashu-Payment-Request"];
                [name: string]: unknown;
            };
            content: {
                /**
                 * @example {
                 *       "error": {
                 *         "type": "authentication_failed",
                 *         "code": "key_expired",
                 *         "message": "The API key has expired",
                 *         "details": {
                 *           "expired_at": "2025-01-01T00:00:00.000Z"
                 *         }
                 *       }
                 *     }
                 */
                "application/json": components["schemas"]["Error401"];
            };
        };
        /**
         * @description The balance (or the X-Cashu token) does not cover the call (type `insufficient_balance`, code
         *     `payment_required`); details `balance`, `required`, `shortfall` in msats, and for a chat, completions
         *     or responses call without `max_tokens` whose balance cannot cover the model's maximum,
         *     `affordable_max_tokens`: the most completion tokens the balance pays for, at the call's requested
         *     `service_tier` and with its declared web search call (the message says so; a retry with `max_tokens`
         *     set to it or less is reserved in full). For an X-Cashu call the
         *     whole token value comes back as a fresh token in `X-Cashu` (nothing is kept) and the NUT-18 request
         *     for the shortfall is in `X-Cashu-Payment-Request`.
         */
        PaymentRequired: {
            headers: {
                "X-Request-ID": components["headers"]["X-Request-ID"];
                "X-Cashu": components["headers"]["X-Cashu-Change"];
                "X-Cashu-Change": components["headers"]["X-Cashu-Change-Status"];
                "X-Cashu-Payment-Request": components["headers"]["X-Cashu-Payment-Request"];
                [name: string]: unknown;
            };
            content: {
                /**
                 * @example {
                 *       "error": {
                 *         "type": "insufficient_balance",
                 *         "code": "payment_required",
                 *         "message": "The balance does not cover the cost of this request",
                 *         "details": {
                 *           "balance": 1500,
                 *           "required": 4000,
                 *           "shortfall": 2500
                 *         }
                 *       }
                 *     }
                 */
                "application/json": components["schemas"]["Error402"];
            };
        };
        /**
         * @description Access denied (type `forbidden`). Codes: `forbidden`, `ip_not_allowed` (the key's allow-list),
         *     `model_not_allowed` (the key's allowed models), `child_key_forbidden` (an operation only a parent
         *     key may do).
         */
        Forbidden: {
            headers: {
                "X-Request-ID": components["headers"]["X-Request-ID"];
                [name: string]: unknown;
            };
            content: {
                "application/json": components["schemas"]["Error403"];
            };
        };
        /**
         * @description No such resource or model (type `not_found`, code `not_found`); on the catch-all, code
         *     `endpoint_not_enabled`: `RELAY_PATHS` does not list this method and path, nothing was relayed or charged.
         */
        NotFound: {
            headers: {
                "X-Request-ID": components["headers"]["X-Request-ID"];
                [name: string]: unknown;
            };
            content: {
                "application/json": components["schemas"]["Error404"];
            };
        };
        /** @description The path exists but not with this method (type `invalid_request`, code `method_not_allowed`). */
        MethodNotAllowed: {
            headers: {
                "X-Request-ID": components["headers"]["X-Request-ID"];
                /** @description The methods the path accepts. */
                Allow?: string;
                [name: string]: unknown;
            };
            content: {
                "application/json": components["schemas"]["Error405"];
            };
        };
        /** @description Answered by the HTTP front door before routing, for any path; code `request_timeout`, the connection then closes. */
        RequestTimeout: {
            headers: {
                "X-Request-ID": components["headers"]["X-Request-ID"];
                [name: string]: unknown;
            };
            content: {
                "application/json": components["schemas"]["Error408"];
            };
        };
        /**
         * @description Type `conflict`. Codes: `token_pending` (the eCash token is pending at the mint; retry later),
         *     `conflict` (the request conflicts with the current state), `payout_in_progress` (a payout of the
         *     account is undecided; `details` names it: `payout_id`, `state`, `since`; `state: closing` with a null
         *     `payout_id`: an MPP session close is under way).
         */
        Conflict: {
            headers: {
                "X-Request-ID": components["headers"]["X-Request-ID"];
                [name: string]: unknown;
            };
            content: {
                "application/json": components["schemas"]["Error409"];
            };
        };
        /** @description The body exceeds MAX_BODY_BYTES (10 MB by default); code `payload_too_large`. */
        PayloadTooLarge: {
            headers: {
                "X-Request-ID": components["headers"]["X-Request-ID"];
                [name: string]: unknown;
            };
            content: {
                "application/json": components["schemas"]["Error413"];
            };
        };
        /**
         * @description The upload body exceeds FILES_MAX_BYTES (200 MiB by default); code `payload_too_large`. Refused from the
         *     declared Content-Length before reading, or once the counted bytes pass the limit; the rest of the body is
         *     read and discarded first (up to 64 MiB), so a client still sending reads the 413.
         */
        UploadTooLarge: {
            headers: {
                "X-Request-ID": components["headers"]["X-Request-ID"];
                [name: string]: unknown;
            };
            content: {
                "application/json": components["schemas"]["Error413"];
            };
        };
        /** @description Answered by the HTTP front door before routing, for any path; the request head exceeds MAX_HEADER_BYTES (64 KB by default); code `headers_too_large`, the connection then closes. */
        HeadersTooLarge: {
            headers: {
                "X-Request-ID": components["headers"]["X-Request-ID"];
                [name: string]: unknown;
            };
            content: {
                "application/json": components["schemas"]["Error431"];
            };
        };
        /** @description Answered by the HTTP front door before routing, for any path; code `http_version_not_supported` (only HTTP/1.0 and 1.1), the connection then closes. */
        HttpVersionNotSupported: {
            headers: {
                "X-Request-ID": components["headers"]["X-Request-ID"];
                [name: string]: unknown;
            };
            content: {
                "application/json": components["schemas"]["Error505"];
            };
        };
        /** @description A JSON endpoint got another Content-Type; code `unsupported_media_type`. */
        UnsupportedMediaType: {
            headers: {
                "X-Request-ID": components["headers"]["X-Request-ID"];
                [name: string]: unknown;
            };
            content: {
                "application/json": components["schemas"]["Error415"];
            };
        };
        /**
         * @description A rate limit is exceeded (type and code `rate_limit_exceeded`); details name the limit. `Retry-After`
         *     says how long to wait.
         */
        TooManyRequests: {
            headers: {
                "X-Request-ID": components["headers"]["X-Request-ID"];
                "Retry-After": components["headers"]["Retry-After"];
                "X-RateLimit-Limit": components["headers"]["X-RateLimit-Limit"];
                "X-RateLimit-Remaining": components["headers"]["X-RateLimit-Remaining"];
                "X-RateLimit-Reset": components["headers"]["X-RateLimit-Reset"];
                "X-RateLimit-Type": components["headers"]["X-RateLimit-Type"];
                [name: string]: unknown;
            };
            content: {
                /**
                 * @example {
                 *       "error": {
                 *         "type": "rate_limit_exceeded",
                 *         "code": "rate_limit_exceeded",
                 *         "message": "Rate limit exceeded",
                 *         "details": {
                 *           "limit_type": "requests_per_minute",
                 *           "limit": 1000,
                 *           "remaining": 0,
                 *           "reset": 1700000060
                 *         }
                 *       }
                 *     }
                 */
                "application/json": components["schemas"]["Error429"];
            };
        };
        /** @description Unexpected server error (type and code `internal_error`); the message says nothing more. */
        InternalError: {
            headers: {
                "X-Request-ID": components["headers"]["X-Request-ID"];
                [name: string]: unknown;
            };
            content: {
                "application/json": components["schemas"]["Error500"];
            };
        };
        /** @description The endpoint is documented but not implemented yet (type and code `not_implemented`). */
        NotImplemented: {
            headers: {
                "X-Request-ID": components["headers"]["X-Request-ID"];
                [name: string]: unknown;
            };
            content: {
                "application/json": components["schemas"]["Error501"];
            };
        };
        /**
         * @description The upstream provider failed: connection refused or reset, or a non-JSON error (type and code
         *     `upstream_error`). Upstream JSON errors are relayed with the upstream's own status and body. Nothing
         *     is charged; X-Cashu calls get their token's value back in `X-Cashu`. `batch_outcome_unknown`
         *     (`POST /v1/batches` only): the call was sent and its answer never came; the batch's reservation is kept
         *     while the gateway looks for it in the provider's list (see createBatch).
         */
        BadGateway: {
            headers: {
                "X-Request-ID": components["headers"]["X-Request-ID"];
                "X-Cashu": components["headers"]["X-Cashu-Change"];
                "X-Cashu-Change": components["headers"]["X-Cashu-Change-Status"];
                [name: string]: unknown;
            };
            content: {
                "application/json": components["schemas"]["Error502"];
            };
        };
        /**
         * @description A dependency is down (type `service_unavailable`). Codes: `service_unavailable`, `store_unavailable`
         *     (the balance store: no call is ever made unpaid), `balance_in_transit` (part of the key's balance sits
         *     in another gateway process's credit lease that did not answer its recall in time: not a refusal for
         *     money, `Retry-After` says when to call again), `mint_unavailable` (the eCash mint),
         *     `price_unavailable` (no fresh BTC price to price the call), `operator_wallet_insufficient` (the model is
         *     served by another node paid with eCash and the operator's surplus cannot pay it; nothing was charged).
         */
        ServiceUnavailable: {
            headers: {
                "X-Request-ID": components["headers"]["X-Request-ID"];
                "Retry-After": components["headers"]["Retry-After"];
                "X-Cashu": components["headers"]["X-Cashu-Change"];
                "X-Cashu-Change": components["headers"]["X-Cashu-Change-Status"];
                [name: string]: unknown;
            };
            content: {
                "application/json": components["schemas"]["Error503"];
            };
        };
        /**
         * @description The upstream provider did not answer in time (UPSTREAM_TIMEOUT_MS; type `upstream_error`, code
         *     `upstream_timeout`). No charge exceeds the reservation taken before the call.
         */
        GatewayTimeout: {
            headers: {
                "X-Request-ID": components["headers"]["X-Request-ID"];
                "X-Cashu": components["headers"]["X-Cashu-Change"];
                "X-Cashu-Change": components["headers"]["X-Cashu-Change-Status"];
                [name: string]: unknown;
            };
            content: {
                "application/json": components["schemas"]["Error504"];
            };
        };
    };
    parameters: never;
    requestBodies: never;
    headers: {
        /** @description The request's id, echoed from the request's `X-Request-ID` or generated. On every response. */
        "X-Request-ID": string;
        /** @description The limit that is closest to being reached (see `X-RateLimit-Type`). */
        "X-RateLimit-Limit": number;
        /** @description What remains of that limit in the current window. */
        "X-RateLimit-Remaining": number;
        /** @description When the current window ends, Unix time in seconds. */
        "X-RateLimit-Reset": number;
        /** @description Which limit the other X-RateLimit headers describe. */
        "X-RateLimit-Type": components["schemas"]["RateLimitType"];
        /** @description Seconds to wait before retrying. */
        "Retry-After": number;
        /**
         * @description What this call was charged, in msats (a bare integer; the `x-node-cost` block's `msats`). On every
         *     charged answer whose head could wait for the charge (non-stream bodies) and on every answer whose cost
         *     was known at admission (flat-priced calls, the catch-all, audio, speech — binary answers included).
         *     Metered streams carry it as the SSE comment `: x-node-cost {…}` before `data: [DONE]` instead.
         */
        "X-Node-Cost": string;
        /**
         * @description Only when the request paid with `X-Cashu`: the change (what the token was worth minus the charge)
         *     as an eCash token (`cashuA…`/`cashuB…`) — the whole value when nothing was charged (a 402, an
         *     upstream failure or error status). Absent when there is no change. Rule for sub-sat remainders: an
         *     X-Cashu call is charged in whole units of the paying token (a `sat` token: the charge is rounded up to
         *     whole sats, the rounding shown as `breakdown.unit_rounding` in `x-node-cost` and included in
         *     `X-Node-Cost`; an `msat` token: exact), and the change is all the rest, in the token's unit — nothing is
         *     left on the token's identity. For streams the change is in the body instead (SSE comment
         *     `: x-cashu <token>`). When the change cannot be made, the `X-Cashu-Change` header says so instead.
         */
        "X-Cashu-Change": string;
        /**
         * @description Sent as `X-Cashu-Change` when an X-Cashu call's change could not be made (the mint or the store was
         *     away): `pending;msat=<amount>;claim="POST /v1/balance/refund"` (an RFC 8941 item; `msat` is absent
         *     when the store could not say the amount). The change stays on the paying token's identity (the pay-out
         *     step takes back whatever it began, retrying in the background), and is claimed by sending the SAME
         *     token to `POST /v1/balance/refund` (`{"cashu_token": …}`, or `Authorization: Bearer <token>`): an
         *     `msat` token is refunded to the msat. For streams: the SSE comment `: x-cashu-change <the same value>`
         *     before `data: [DONE]`.
         */
        "X-Cashu-Change-Status": string;
        /**
         * @description On an answer an MPP `Payment` credential paid: base64url of a JCS JSON receipt { method: "lightning",
         *     reference (the charge's payment hash, or the session id), status: "success", timestamp, and for a charge
         *     challengeId; a session close adds refundSats and refundStatus }.
         */
        "Payment-Receipt": string;
        /**
         * @description A NUT-18 payment request (`creqA…`) naming the mints this node accepts and, on 402, the amount
         *     needed, so NUT-24 clients can pay with `X-Cashu`. Sent as `X-Cashu` on a 401 without credentials and
         *     on a 402 for a key; on a 402 for an X-Cashu call it is sent as `X-Cashu-Payment-Request`, because
         *     `X-Cashu` then carries the caller's token value back (stateless pay-per-call).
         */
        "X-Cashu-Payment-Request": string;
    };
    pathItems: never;
}
export type $defs = Record<string, never>;
export interface operations {
    createChatCompletion: {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        requestBody: {
            content: {
                /**
                 * @example {
                 *       "model": "gpt-4o-mini",
                 *       "messages": [
                 *         {
                 *           "role": "user",
                 *           "content": "Say hello"
                 *         }
                 *       ],
                 *       "max_tokens": 50
                 *     }
                 */
                "application/json": components["schemas"]["ChatCompletionRequest"];
            };
        };
        responses: {
            /** @description The completion (JSON), or its stream of chunks (`stream` true). */
            200: {
                headers: {
                    "X-Request-ID": components["headers"]["X-Request-ID"];
                    "X-RateLimit-Limit": components["headers"]["X-RateLimit-Limit"];
                    "X-RateLimit-Remaining": components["headers"]["X-RateLimit-Remaining"];
                    "X-RateLimit-Reset": components["headers"]["X-RateLimit-Reset"];
                    "X-RateLimit-Type": components["headers"]["X-RateLimit-Type"];
                    "X-Cashu": components["headers"]["X-Cashu-Change"];
                    "X-Cashu-Change": components["headers"]["X-Cashu-Change-Status"];
                    "X-Node-Cost": components["headers"]["X-Node-Cost"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ChatCompletion"];
                    /**
                     * @example data: {"id":"chatcmpl-1","object":"chat.completion.chunk","created":1700000000,"model":"gpt-4o-mini","choices":[{"index":0,"delta":{"role":"assistant","content":"Hello"},"finish_reason":null}]}
                     *
                     *     data: {"id":"chatcmpl-1","object":"chat.completion.chunk","created":1700000000,"model":"gpt-4o-mini","choices":[{"index":0,"delta":{},"finish_reason":"stop"}]}
                     *
                     *     : x-cashu cashuB...
                     *
                     *     data: [DONE]
                     */
                    "text/event-stream": string;
                };
            };
            400: components["responses"]["BadRequest"];
            401: components["responses"]["Unauthorized"];
            402: components["responses"]["PaymentRequired"];
            403: components["responses"]["Forbidden"];
            404: components["responses"]["NotFound"];
            409: components["responses"]["Conflict"];
            413: components["responses"]["PayloadTooLarge"];
            415: components["responses"]["UnsupportedMediaType"];
            429: components["responses"]["TooManyRequests"];
            500: components["responses"]["InternalError"];
            502: components["responses"]["BadGateway"];
            503: components["responses"]["ServiceUnavailable"];
            504: components["responses"]["GatewayTimeout"];
        };
    };
    createCompletion: {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        requestBody: {
            content: {
                "application/json": components["schemas"]["CompletionRequest"];
            };
        };
        responses: {
            /** @description The completion, or its stream (`stream` true). */
            200: {
                headers: {
                    "X-Request-ID": components["headers"]["X-Request-ID"];
                    "X-RateLimit-Limit": components["headers"]["X-RateLimit-Limit"];
                    "X-RateLimit-Remaining": components["headers"]["X-RateLimit-Remaining"];
                    "X-RateLimit-Reset": components["headers"]["X-RateLimit-Reset"];
                    "X-RateLimit-Type": components["headers"]["X-RateLimit-Type"];
                    "X-Cashu": components["headers"]["X-Cashu-Change"];
                    "X-Cashu-Change": components["headers"]["X-Cashu-Change-Status"];
                    "X-Node-Cost": components["headers"]["X-Node-Cost"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Completion"];
                    "text/event-stream": string;
                };
            };
            400: components["responses"]["BadRequest"];
            401: components["responses"]["Unauthorized"];
            402: components["responses"]["PaymentRequired"];
            403: components["responses"]["Forbidden"];
            404: components["responses"]["NotFound"];
            409: components["responses"]["Conflict"];
            413: components["responses"]["PayloadTooLarge"];
            415: components["responses"]["UnsupportedMediaType"];
            429: components["responses"]["TooManyRequests"];
            500: components["responses"]["InternalError"];
            502: components["responses"]["BadGateway"];
            503: components["responses"]["ServiceUnavailable"];
            504: components["responses"]["GatewayTimeout"];
        };
    };
    createEmbedding: {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        requestBody: {
            content: {
                "application/json": components["schemas"]["EmbeddingRequest"];
            };
        };
        responses: {
            /** @description The embeddings. */
            200: {
                headers: {
                    "X-Request-ID": components["headers"]["X-Request-ID"];
                    "X-RateLimit-Limit": components["headers"]["X-RateLimit-Limit"];
                    "X-RateLimit-Remaining": components["headers"]["X-RateLimit-Remaining"];
                    "X-RateLimit-Reset": components["headers"]["X-RateLimit-Reset"];
                    "X-RateLimit-Type": components["headers"]["X-RateLimit-Type"];
                    "X-Cashu": components["headers"]["X-Cashu-Change"];
                    "X-Cashu-Change": components["headers"]["X-Cashu-Change-Status"];
                    "X-Node-Cost": components["headers"]["X-Node-Cost"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["EmbeddingList"];
                };
            };
            400: components["responses"]["BadRequest"];
            401: components["responses"]["Unauthorized"];
            402: components["responses"]["PaymentRequired"];
            403: components["responses"]["Forbidden"];
            404: components["responses"]["NotFound"];
            409: components["responses"]["Conflict"];
            413: components["responses"]["PayloadTooLarge"];
            415: components["responses"]["UnsupportedMediaType"];
            429: components["responses"]["TooManyRequests"];
            500: components["responses"]["InternalError"];
            502: components["responses"]["BadGateway"];
            503: components["responses"]["ServiceUnavailable"];
            504: components["responses"]["GatewayTimeout"];
        };
    };
    createResponse: {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        requestBody: {
            content: {
                "application/json": components["schemas"]["ResponseRequest"];
            };
        };
        responses: {
            /** @description The response object, or its event stream (`stream` true). */
            200: {
                headers: {
                    "X-Request-ID": components["headers"]["X-Request-ID"];
                    "X-RateLimit-Limit": components["headers"]["X-RateLimit-Limit"];
                    "X-RateLimit-Remaining": components["headers"]["X-RateLimit-Remaining"];
                    "X-RateLimit-Reset": components["headers"]["X-RateLimit-Reset"];
                    "X-RateLimit-Type": components["headers"]["X-RateLimit-Type"];
                    "X-Cashu": components["headers"]["X-Cashu-Change"];
                    "X-Cashu-Change": components["headers"]["X-Cashu-Change-Status"];
                    "X-Node-Cost": components["headers"]["X-Node-Cost"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ResponseObject"];
                    "text/event-stream": string;
                };
            };
            400: components["responses"]["BadRequest"];
            401: components["responses"]["Unauthorized"];
            402: components["responses"]["PaymentRequired"];
            403: components["responses"]["Forbidden"];
            404: components["responses"]["NotFound"];
            409: components["responses"]["Conflict"];
            413: components["responses"]["PayloadTooLarge"];
            415: components["responses"]["UnsupportedMediaType"];
            429: components["responses"]["TooManyRequests"];
            500: components["responses"]["InternalError"];
            502: components["responses"]["BadGateway"];
            503: components["responses"]["ServiceUnavailable"];
            504: components["responses"]["GatewayTimeout"];
        };
    };
    createMessage: {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        requestBody: {
            content: {
                "application/json": components["schemas"]["MessagesRequest"];
            };
        };
        responses: {
            /** @description The message, or its event stream (`stream` true) as the provider sends it. */
            200: {
                headers: {
                    "X-Request-ID": components["headers"]["X-Request-ID"];
                    "X-RateLimit-Limit": components["headers"]["X-RateLimit-Limit"];
                    "X-RateLimit-Remaining": components["headers"]["X-RateLimit-Remaining"];
                    "X-RateLimit-Reset": components["headers"]["X-RateLimit-Reset"];
                    "X-RateLimit-Type": components["headers"]["X-RateLimit-Type"];
                    "X-Cashu": components["headers"]["X-Cashu-Change"];
                    "X-Cashu-Change": components["headers"]["X-Cashu-Change-Status"];
                    "X-Node-Cost": components["headers"]["X-Node-Cost"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": {
                        [key: string]: unknown;
                    };
                    "text/event-stream": string;
                };
            };
            400: components["responses"]["AnthropicError"];
            401: components["responses"]["AnthropicError"];
            402: components["responses"]["AnthropicError"];
            403: components["responses"]["AnthropicError"];
            404: components["responses"]["AnthropicError"];
            413: components["responses"]["AnthropicError"];
            415: components["responses"]["AnthropicError"];
            429: components["responses"]["AnthropicError"];
            500: components["responses"]["AnthropicError"];
            502: components["responses"]["AnthropicError"];
            503: components["responses"]["AnthropicError"];
            504: components["responses"]["AnthropicError"];
        };
    };
    countMessageTokens: {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        requestBody: {
            content: {
                "application/json": components["schemas"]["CountTokensRequest"];
            };
        };
        responses: {
            /** @description `{input_tokens}` as the provider counts them. */
            200: {
                headers: {
                    "X-Request-ID": components["headers"]["X-Request-ID"];
                    "X-RateLimit-Limit": components["headers"]["X-RateLimit-Limit"];
                    "X-RateLimit-Remaining": components["headers"]["X-RateLimit-Remaining"];
                    "X-RateLimit-Reset": components["headers"]["X-RateLimit-Reset"];
                    "X-RateLimit-Type": components["headers"]["X-RateLimit-Type"];
                    "X-Cashu": components["headers"]["X-Cashu-Change"];
                    "X-Cashu-Change": components["headers"]["X-Cashu-Change-Status"];
                    "X-Node-Cost": components["headers"]["X-Node-Cost"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": {
                        [key: string]: unknown;
                    };
                };
            };
            400: components["responses"]["AnthropicError"];
            401: components["responses"]["AnthropicError"];
            402: components["responses"]["AnthropicError"];
            403: components["responses"]["AnthropicError"];
            404: components["responses"]["AnthropicError"];
            413: components["responses"]["AnthropicError"];
            415: components["responses"]["AnthropicError"];
            429: components["responses"]["AnthropicError"];
            500: components["responses"]["AnthropicError"];
            502: components["responses"]["AnthropicError"];
            503: components["responses"]["AnthropicError"];
            504: components["responses"]["AnthropicError"];
        };
    };
    realtimeSession: {
        parameters: {
            query: {
                model: string;
            };
            header?: never;
            path?: never;
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description Switching Protocols; the WebSocket session begins. */
            101: {
                headers: {
                    [name: string]: unknown;
                };
                content?: never;
            };
            400: components["responses"]["BadRequest"];
            401: components["responses"]["Unauthorized"];
            402: components["responses"]["PaymentRequired"];
            403: components["responses"]["Forbidden"];
            404: components["responses"]["NotFound"];
            429: components["responses"]["TooManyRequests"];
            502: components["responses"]["BadGateway"];
            503: components["responses"]["ServiceUnavailable"];
        };
    };
    createImage: {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        requestBody: {
            content: {
                "application/json": components["schemas"]["ImageGenerationRequest"];
            };
        };
        responses: {
            /** @description The generated images. */
            200: {
                headers: {
                    "X-Request-ID": components["headers"]["X-Request-ID"];
                    "X-RateLimit-Limit": components["headers"]["X-RateLimit-Limit"];
                    "X-RateLimit-Remaining": components["headers"]["X-RateLimit-Remaining"];
                    "X-RateLimit-Reset": components["headers"]["X-RateLimit-Reset"];
                    "X-RateLimit-Type": components["headers"]["X-RateLimit-Type"];
                    "X-Cashu": components["headers"]["X-Cashu-Change"];
                    "X-Cashu-Change": components["headers"]["X-Cashu-Change-Status"];
                    "X-Node-Cost": components["headers"]["X-Node-Cost"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ImageList"];
                };
            };
            400: components["responses"]["BadRequest"];
            401: components["responses"]["Unauthorized"];
            402: components["responses"]["PaymentRequired"];
            403: components["responses"]["Forbidden"];
            404: components["responses"]["NotFound"];
            409: components["responses"]["Conflict"];
            413: components["responses"]["PayloadTooLarge"];
            429: components["responses"]["TooManyRequests"];
            500: components["responses"]["InternalError"];
            502: components["responses"]["BadGateway"];
            503: components["responses"]["ServiceUnavailable"];
            504: components["responses"]["GatewayTimeout"];
        };
    };
    createTranscription: {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        requestBody: {
            content: {
                "multipart/form-data": components["schemas"]["AudioRequest"];
            };
        };
        responses: {
            /** @description The transcription (JSON, or text / srt / vtt as `response_format` asks). */
            200: {
                headers: {
                    "X-Request-ID": components["headers"]["X-Request-ID"];
                    "X-RateLimit-Limit": components["headers"]["X-RateLimit-Limit"];
                    "X-RateLimit-Remaining": components["headers"]["X-RateLimit-Remaining"];
                    "X-RateLimit-Reset": components["headers"]["X-RateLimit-Reset"];
                    "X-RateLimit-Type": components["headers"]["X-RateLimit-Type"];
                    "X-Cashu": components["headers"]["X-Cashu-Change"];
                    "X-Cashu-Change": components["headers"]["X-Cashu-Change-Status"];
                    "X-Node-Cost": components["headers"]["X-Node-Cost"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["AudioText"];
                    "text/plain": string;
                };
            };
            400: components["responses"]["BadRequest"];
            401: components["responses"]["Unauthorized"];
            402: components["responses"]["PaymentRequired"];
            403: components["responses"]["Forbidden"];
            409: components["responses"]["Conflict"];
            413: components["responses"]["PayloadTooLarge"];
            429: components["responses"]["TooManyRequests"];
            500: components["responses"]["InternalError"];
            502: components["responses"]["BadGateway"];
            503: components["responses"]["ServiceUnavailable"];
            504: components["responses"]["GatewayTimeout"];
        };
    };
    createTranslation: {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        requestBody: {
            content: {
                "multipart/form-data": components["schemas"]["AudioRequest"];
            };
        };
        responses: {
            /** @description The English text. */
            200: {
                headers: {
                    "X-Request-ID": components["headers"]["X-Request-ID"];
                    "X-RateLimit-Limit": components["headers"]["X-RateLimit-Limit"];
                    "X-RateLimit-Remaining": components["headers"]["X-RateLimit-Remaining"];
                    "X-RateLimit-Reset": components["headers"]["X-RateLimit-Reset"];
                    "X-RateLimit-Type": components["headers"]["X-RateLimit-Type"];
                    "X-Cashu": components["headers"]["X-Cashu-Change"];
                    "X-Cashu-Change": components["headers"]["X-Cashu-Change-Status"];
                    "X-Node-Cost": components["headers"]["X-Node-Cost"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["AudioText"];
                    "text/plain": string;
                };
            };
            400: components["responses"]["BadRequest"];
            401: components["responses"]["Unauthorized"];
            402: components["responses"]["PaymentRequired"];
            403: components["responses"]["Forbidden"];
            409: components["responses"]["Conflict"];
            413: components["responses"]["PayloadTooLarge"];
            429: components["responses"]["TooManyRequests"];
            500: components["responses"]["InternalError"];
            502: components["responses"]["BadGateway"];
            503: components["responses"]["ServiceUnavailable"];
            504: components["responses"]["GatewayTimeout"];
        };
    };
    createSpeech: {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        requestBody: {
            content: {
                "application/json": components["schemas"]["SpeechRequest"];
            };
        };
        responses: {
            /** @description The audio (mp3 unless `response_format` says otherwise). */
            200: {
                headers: {
                    "X-Request-ID": components["headers"]["X-Request-ID"];
                    "X-RateLimit-Limit": components["headers"]["X-RateLimit-Limit"];
                    "X-RateLimit-Remaining": components["headers"]["X-RateLimit-Remaining"];
                    "X-RateLimit-Reset": components["headers"]["X-RateLimit-Reset"];
                    "X-RateLimit-Type": components["headers"]["X-RateLimit-Type"];
                    "X-Cashu": components["headers"]["X-Cashu-Change"];
                    "X-Cashu-Change": components["headers"]["X-Cashu-Change-Status"];
                    "X-Node-Cost": components["headers"]["X-Node-Cost"];
                    [name: string]: unknown;
                };
                content: {
                    "audio/*": string;
                };
            };
            400: components["responses"]["BadRequest"];
            401: components["responses"]["Unauthorized"];
            402: components["responses"]["PaymentRequired"];
            403: components["responses"]["Forbidden"];
            404: components["responses"]["NotFound"];
            413: components["responses"]["PayloadTooLarge"];
            429: components["responses"]["TooManyRequests"];
            500: components["responses"]["InternalError"];
            502: components["responses"]["BadGateway"];
            503: components["responses"]["ServiceUnavailable"];
            504: components["responses"]["GatewayTimeout"];
        };
    };
    createImageEdit: {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        requestBody: {
            content: {
                "multipart/form-data": components["schemas"]["ImageUploadRequest"];
            };
        };
        responses: {
            /** @description The edited images. */
            200: {
                headers: {
                    "X-Request-ID": components["headers"]["X-Request-ID"];
                    "X-RateLimit-Limit": components["headers"]["X-RateLimit-Limit"];
                    "X-RateLimit-Remaining": components["headers"]["X-RateLimit-Remaining"];
                    "X-RateLimit-Reset": components["headers"]["X-RateLimit-Reset"];
                    "X-RateLimit-Type": components["headers"]["X-RateLimit-Type"];
                    "X-Cashu": components["headers"]["X-Cashu-Change"];
                    "X-Cashu-Change": components["headers"]["X-Cashu-Change-Status"];
                    "X-Node-Cost": components["headers"]["X-Node-Cost"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ImageList"];
                };
            };
            400: components["responses"]["BadRequest"];
            401: components["responses"]["Unauthorized"];
            402: components["responses"]["PaymentRequired"];
            403: components["responses"]["Forbidden"];
            404: components["responses"]["NotFound"];
            413: components["responses"]["PayloadTooLarge"];
            429: components["responses"]["TooManyRequests"];
            500: components["responses"]["InternalError"];
            502: components["responses"]["BadGateway"];
            503: components["responses"]["ServiceUnavailable"];
            504: components["responses"]["GatewayTimeout"];
        };
    };
    createImageVariation: {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        requestBody: {
            content: {
                "multipart/form-data": components["schemas"]["ImageUploadRequest"];
            };
        };
        responses: {
            /** @description The variations. */
            200: {
                headers: {
                    "X-Request-ID": components["headers"]["X-Request-ID"];
                    "X-RateLimit-Limit": components["headers"]["X-RateLimit-Limit"];
                    "X-RateLimit-Remaining": components["headers"]["X-RateLimit-Remaining"];
                    "X-RateLimit-Reset": components["headers"]["X-RateLimit-Reset"];
                    "X-RateLimit-Type": components["headers"]["X-RateLimit-Type"];
                    "X-Cashu": components["headers"]["X-Cashu-Change"];
                    "X-Cashu-Change": components["headers"]["X-Cashu-Change-Status"];
                    "X-Node-Cost": components["headers"]["X-Node-Cost"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ImageList"];
                };
            };
            400: components["responses"]["BadRequest"];
            401: components["responses"]["Unauthorized"];
            402: components["responses"]["PaymentRequired"];
            403: components["responses"]["Forbidden"];
            404: components["responses"]["NotFound"];
            413: components["responses"]["PayloadTooLarge"];
            429: components["responses"]["TooManyRequests"];
            500: components["responses"]["InternalError"];
            502: components["responses"]["BadGateway"];
            503: components["responses"]["ServiceUnavailable"];
            504: components["responses"]["GatewayTimeout"];
        };
    };
    listModels: {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description The model list. */
            200: {
                headers: {
                    "X-Request-ID": components["headers"]["X-Request-ID"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ModelList"];
                };
            };
            429: components["responses"]["TooManyRequests"];
            500: components["responses"]["InternalError"];
        };
    };
    retrieveModel: {
        parameters: {
            query?: never;
            header?: never;
            path: {
                model: string;
            };
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description The model. */
            200: {
                headers: {
                    "X-Request-ID": components["headers"]["X-Request-ID"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Model"];
                };
            };
            404: components["responses"]["NotFound"];
            429: components["responses"]["TooManyRequests"];
            500: components["responses"]["InternalError"];
        };
    };
    getNodeInfo: {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description Name, version, accepted mints and models of this node. */
            200: {
                headers: {
                    "X-Request-ID": components["headers"]["X-Request-ID"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["NodeInfo"];
                };
            };
            429: components["responses"]["TooManyRequests"];
            500: components["responses"]["InternalError"];
        };
    };
    listProviders: {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description The providers. */
            200: {
                headers: {
                    "X-Request-ID": components["headers"]["X-Request-ID"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ProviderList"];
                };
            };
            429: components["responses"]["TooManyRequests"];
            500: components["responses"]["InternalError"];
        };
    };
    getProvider: {
        parameters: {
            query?: never;
            header?: never;
            path: {
                /** @description The provider's `name` from GET /v1/providers. */
                provider_name: string;
            };
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description The provider. */
            200: {
                headers: {
                    "X-Request-ID": components["headers"]["X-Request-ID"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ProviderDetail"];
                };
            };
            404: components["responses"]["NotFound"];
            429: components["responses"]["TooManyRequests"];
            500: components["responses"]["InternalError"];
        };
    };
    estimateCost: {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        requestBody: {
            content: {
                /**
                 * @example {
                 *       "model": "gpt-4o-mini",
                 *       "prompt_tokens": 1000,
                 *       "max_tokens": 500
                 *     }
                 */
                "application/json": components["schemas"]["EstimateRequest"];
            };
        };
        responses: {
            /** @description The estimate. */
            200: {
                headers: {
                    "X-Request-ID": components["headers"]["X-Request-ID"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Estimate"];
                };
            };
            400: components["responses"]["BadRequest"];
            404: components["responses"]["NotFound"];
            413: components["responses"]["PayloadTooLarge"];
            415: components["responses"]["UnsupportedMediaType"];
            429: components["responses"]["TooManyRequests"];
            500: components["responses"]["InternalError"];
            503: components["responses"]["ServiceUnavailable"];
        };
    };
    createWallet: {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        requestBody: {
            content: {
                "application/json": components["schemas"]["WalletCreateRequest"];
            };
        };
        responses: {
            /** @description The new key. The key is shown in full only in this answer, so store it. */
            201: {
                headers: {
                    "X-Request-ID": components["headers"]["X-Request-ID"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["WalletCreated"];
                };
            };
            400: components["responses"]["BadRequest"];
            409: components["responses"]["Conflict"];
            413: components["responses"]["PayloadTooLarge"];
            415: components["responses"]["UnsupportedMediaType"];
            429: components["responses"]["TooManyRequests"];
            500: components["responses"]["InternalError"];
            503: components["responses"]["ServiceUnavailable"];
        };
    };
    getWalletAccount: {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description The account of the calling key. */
            200: {
                headers: {
                    "X-Request-ID": components["headers"]["X-Request-ID"];
                    "X-RateLimit-Limit": components["headers"]["X-RateLimit-Limit"];
                    "X-RateLimit-Remaining": components["headers"]["X-RateLimit-Remaining"];
                    "X-RateLimit-Reset": components["headers"]["X-RateLimit-Reset"];
                    "X-RateLimit-Type": components["headers"]["X-RateLimit-Type"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["WalletAccount"];
                };
            };
            401: components["responses"]["Unauthorized"];
            403: components["responses"]["Forbidden"];
            429: components["responses"]["TooManyRequests"];
            500: components["responses"]["InternalError"];
            503: components["responses"]["ServiceUnavailable"];
        };
    };
    deleteWallet: {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description The key is deleted (or, if the delete failed after the pay-out, `deleted` is false and the token is still here; the key works again and the call may be repeated). */
            200: {
                headers: {
                    "X-Request-ID": components["headers"]["X-Request-ID"];
                    "X-RateLimit-Limit": components["headers"]["X-RateLimit-Limit"];
                    "X-RateLimit-Remaining": components["headers"]["X-RateLimit-Remaining"];
                    "X-RateLimit-Reset": components["headers"]["X-RateLimit-Reset"];
                    "X-RateLimit-Type": components["headers"]["X-RateLimit-Type"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["KeyDeleted"];
                };
            };
            401: components["responses"]["Unauthorized"];
            403: components["responses"]["Forbidden"];
            409: components["responses"]["Conflict"];
            429: components["responses"]["TooManyRequests"];
            500: components["responses"]["InternalError"];
            503: components["responses"]["ServiceUnavailable"];
        };
    };
    getWalletBalance: {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description Balance and totals (with `reserved`). */
            200: {
                headers: {
                    "X-Request-ID": components["headers"]["X-Request-ID"];
                    "X-RateLimit-Limit": components["headers"]["X-RateLimit-Limit"];
                    "X-RateLimit-Remaining": components["headers"]["X-RateLimit-Remaining"];
                    "X-RateLimit-Reset": components["headers"]["X-RateLimit-Reset"];
                    "X-RateLimit-Type": components["headers"]["X-RateLimit-Type"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["WalletBalance"];
                };
            };
            401: components["responses"]["Unauthorized"];
            403: components["responses"]["Forbidden"];
            429: components["responses"]["TooManyRequests"];
            500: components["responses"]["InternalError"];
            503: components["responses"]["ServiceUnavailable"];
        };
    };
    getBalanceInfo: {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description The key's information. */
            200: {
                headers: {
                    "X-Request-ID": components["headers"]["X-Request-ID"];
                    "X-RateLimit-Limit": components["headers"]["X-RateLimit-Limit"];
                    "X-RateLimit-Remaining": components["headers"]["X-RateLimit-Remaining"];
                    "X-RateLimit-Reset": components["headers"]["X-RateLimit-Reset"];
                    "X-RateLimit-Type": components["headers"]["X-RateLimit-Type"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["BalanceInfo"];
                };
            };
            401: components["responses"]["Unauthorized"];
            403: components["responses"]["Forbidden"];
            429: components["responses"]["TooManyRequests"];
            500: components["responses"]["InternalError"];
            503: components["responses"]["ServiceUnavailable"];
        };
    };
    listFiles: {
        parameters: {
            query?: {
                limit?: number;
                /** @description The last id of the previous page. */
                after?: string;
                order?: "desc";
            };
            header?: never;
            path?: never;
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description The key's files. */
            200: {
                headers: {
                    "X-Request-ID": components["headers"]["X-Request-ID"];
                    "X-RateLimit-Limit": components["headers"]["X-RateLimit-Limit"];
                    "X-RateLimit-Remaining": components["headers"]["X-RateLimit-Remaining"];
                    "X-RateLimit-Reset": components["headers"]["X-RateLimit-Reset"];
                    "X-RateLimit-Type": components["headers"]["X-RateLimit-Type"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["FileList"];
                };
            };
            401: components["responses"]["Unauthorized"];
            403: components["responses"]["Forbidden"];
            429: components["responses"]["TooManyRequests"];
            500: components["responses"]["InternalError"];
            502: components["responses"]["BadGateway"];
            503: components["responses"]["ServiceUnavailable"];
        };
    };
    uploadFile: {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        requestBody: {
            content: {
                "multipart/form-data": components["schemas"]["FileUploadRequest"];
            };
        };
        responses: {
            /** @description The provider's file object. */
            200: {
                headers: {
                    "X-Request-ID": components["headers"]["X-Request-ID"];
                    "X-RateLimit-Limit": components["headers"]["X-RateLimit-Limit"];
                    "X-RateLimit-Remaining": components["headers"]["X-RateLimit-Remaining"];
                    "X-RateLimit-Reset": components["headers"]["X-RateLimit-Reset"];
                    "X-RateLimit-Type": components["headers"]["X-RateLimit-Type"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["FileObject"];
                };
            };
            400: components["responses"]["BadRequest"];
            401: components["responses"]["Unauthorized"];
            403: components["responses"]["Forbidden"];
            413: components["responses"]["UploadTooLarge"];
            415: components["responses"]["UnsupportedMediaType"];
            429: components["responses"]["TooManyRequests"];
            500: components["responses"]["InternalError"];
            502: components["responses"]["BadGateway"];
            503: components["responses"]["ServiceUnavailable"];
        };
    };
    getFile: {
        parameters: {
            query?: never;
            header?: never;
            path: {
                file_id: string;
            };
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description The provider's file object. */
            200: {
                headers: {
                    "X-Request-ID": components["headers"]["X-Request-ID"];
                    "X-RateLimit-Limit": components["headers"]["X-RateLimit-Limit"];
                    "X-RateLimit-Remaining": components["headers"]["X-RateLimit-Remaining"];
                    "X-RateLimit-Reset": components["headers"]["X-RateLimit-Reset"];
                    "X-RateLimit-Type": components["headers"]["X-RateLimit-Type"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["FileObject"];
                };
            };
            401: components["responses"]["Unauthorized"];
            403: components["responses"]["Forbidden"];
            404: components["responses"]["NotFound"];
            429: components["responses"]["TooManyRequests"];
            500: components["responses"]["InternalError"];
            502: components["responses"]["BadGateway"];
            503: components["responses"]["ServiceUnavailable"];
        };
    };
    deleteFile: {
        parameters: {
            query?: never;
            header?: never;
            path: {
                file_id: string;
            };
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description The provider's deletion answer. */
            200: {
                headers: {
                    "X-Request-ID": components["headers"]["X-Request-ID"];
                    "X-RateLimit-Limit": components["headers"]["X-RateLimit-Limit"];
                    "X-RateLimit-Remaining": components["headers"]["X-RateLimit-Remaining"];
                    "X-RateLimit-Reset": components["headers"]["X-RateLimit-Reset"];
                    "X-RateLimit-Type": components["headers"]["X-RateLimit-Type"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["DeletedObject"];
                };
            };
            401: components["responses"]["Unauthorized"];
            403: components["responses"]["Forbidden"];
            404: components["responses"]["NotFound"];
            429: components["responses"]["TooManyRequests"];
            500: components["responses"]["InternalError"];
            502: components["responses"]["BadGateway"];
            503: components["responses"]["ServiceUnavailable"];
        };
    };
    getFileContent: {
        parameters: {
            query?: never;
            header?: never;
            path: {
                file_id: string;
            };
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description The file's content. */
            200: {
                headers: {
                    "X-Request-ID": components["headers"]["X-Request-ID"];
                    "X-RateLimit-Limit": components["headers"]["X-RateLimit-Limit"];
                    "X-RateLimit-Remaining": components["headers"]["X-RateLimit-Remaining"];
                    "X-RateLimit-Reset": components["headers"]["X-RateLimit-Reset"];
                    "X-RateLimit-Type": components["headers"]["X-RateLimit-Type"];
                    [name: string]: unknown;
                };
                content: {
                    "application/octet-stream": string;
                };
            };
            401: components["responses"]["Unauthorized"];
            403: components["responses"]["Forbidden"];
            404: components["responses"]["NotFound"];
            429: components["responses"]["TooManyRequests"];
            500: components["responses"]["InternalError"];
            502: components["responses"]["BadGateway"];
            503: components["responses"]["ServiceUnavailable"];
        };
    };
    listBatches: {
        parameters: {
            query?: {
                limit?: number;
                /** @description The last id of the previous page. */
                after?: string;
                order?: "desc";
            };
            header?: never;
            path?: never;
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description The key's batches. */
            200: {
                headers: {
                    "X-Request-ID": components["headers"]["X-Request-ID"];
                    "X-RateLimit-Limit": components["headers"]["X-RateLimit-Limit"];
                    "X-RateLimit-Remaining": components["headers"]["X-RateLimit-Remaining"];
                    "X-RateLimit-Reset": components["headers"]["X-RateLimit-Reset"];
                    "X-RateLimit-Type": components["headers"]["X-RateLimit-Type"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["BatchList"];
                };
            };
            401: components["responses"]["Unauthorized"];
            403: components["responses"]["Forbidden"];
            429: components["responses"]["TooManyRequests"];
            500: components["responses"]["InternalError"];
            502: components["responses"]["BadGateway"];
            503: components["responses"]["ServiceUnavailable"];
        };
    };
    createBatch: {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        requestBody: {
            content: {
                /**
                 * @example {
                 *       "input_file_id": "file-abc123",
                 *       "endpoint": "/v1/chat/completions",
                 *       "completion_window": "24h"
                 *     }
                 */
                "application/json": components["schemas"]["BatchCreateRequest"];
            };
        };
        responses: {
            /** @description The provider's batch object. */
            200: {
                headers: {
                    "X-Request-ID": components["headers"]["X-Request-ID"];
                    "X-RateLimit-Limit": components["headers"]["X-RateLimit-Limit"];
                    "X-RateLimit-Remaining": components["headers"]["X-RateLimit-Remaining"];
                    "X-RateLimit-Reset": components["headers"]["X-RateLimit-Reset"];
                    "X-RateLimit-Type": components["headers"]["X-RateLimit-Type"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["BatchObject"];
                };
            };
            400: components["responses"]["BadRequest"];
            401: components["responses"]["Unauthorized"];
            402: components["responses"]["PaymentRequired"];
            403: components["responses"]["Forbidden"];
            404: components["responses"]["NotFound"];
            413: components["responses"]["PayloadTooLarge"];
            415: components["responses"]["UnsupportedMediaType"];
            429: components["responses"]["TooManyRequests"];
            500: components["responses"]["InternalError"];
            502: components["responses"]["BadGateway"];
            503: components["responses"]["ServiceUnavailable"];
        };
    };
    getBatch: {
        parameters: {
            query?: never;
            header?: never;
            path: {
                batch_id: string;
            };
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description The provider's batch object. */
            200: {
                headers: {
                    "X-Request-ID": components["headers"]["X-Request-ID"];
                    "X-RateLimit-Limit": components["headers"]["X-RateLimit-Limit"];
                    "X-RateLimit-Remaining": components["headers"]["X-RateLimit-Remaining"];
                    "X-RateLimit-Reset": components["headers"]["X-RateLimit-Reset"];
                    "X-RateLimit-Type": components["headers"]["X-RateLimit-Type"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["BatchObject"];
                };
            };
            401: components["responses"]["Unauthorized"];
            403: components["responses"]["Forbidden"];
            404: components["responses"]["NotFound"];
            429: components["responses"]["TooManyRequests"];
            500: components["responses"]["InternalError"];
            502: components["responses"]["BadGateway"];
            503: components["responses"]["ServiceUnavailable"];
        };
    };
    cancelBatch: {
        parameters: {
            query?: never;
            header?: never;
            path: {
                batch_id: string;
            };
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description The provider's batch object. */
            200: {
                headers: {
                    "X-Request-ID": components["headers"]["X-Request-ID"];
                    "X-RateLimit-Limit": components["headers"]["X-RateLimit-Limit"];
                    "X-RateLimit-Remaining": components["headers"]["X-RateLimit-Remaining"];
                    "X-RateLimit-Reset": components["headers"]["X-RateLimit-Reset"];
                    "X-RateLimit-Type": components["headers"]["X-RateLimit-Type"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["BatchObject"];
                };
            };
            401: components["responses"]["Unauthorized"];
            403: components["responses"]["Forbidden"];
            404: components["responses"]["NotFound"];
            429: components["responses"]["TooManyRequests"];
            500: components["responses"]["InternalError"];
            502: components["responses"]["BadGateway"];
            503: components["responses"]["ServiceUnavailable"];
        };
    };
    getResponse: {
        parameters: {
            query?: never;
            header?: never;
            path: {
                response_id: string;
            };
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description The provider's response object. */
            200: {
                headers: {
                    "X-Request-ID": components["headers"]["X-Request-ID"];
                    "X-RateLimit-Limit": components["headers"]["X-RateLimit-Limit"];
                    "X-RateLimit-Remaining": components["headers"]["X-RateLimit-Remaining"];
                    "X-RateLimit-Reset": components["headers"]["X-RateLimit-Reset"];
                    "X-RateLimit-Type": components["headers"]["X-RateLimit-Type"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ProviderObject"];
                };
            };
            401: components["responses"]["Unauthorized"];
            403: components["responses"]["Forbidden"];
            404: components["responses"]["NotFound"];
            429: components["responses"]["TooManyRequests"];
            500: components["responses"]["InternalError"];
            502: components["responses"]["BadGateway"];
            503: components["responses"]["ServiceUnavailable"];
        };
    };
    deleteResponse: {
        parameters: {
            query?: never;
            header?: never;
            path: {
                response_id: string;
            };
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description The provider's deletion answer. */
            200: {
                headers: {
                    "X-Request-ID": components["headers"]["X-Request-ID"];
                    "X-RateLimit-Limit": components["headers"]["X-RateLimit-Limit"];
                    "X-RateLimit-Remaining": components["headers"]["X-RateLimit-Remaining"];
                    "X-RateLimit-Reset": components["headers"]["X-RateLimit-Reset"];
                    "X-RateLimit-Type": components["headers"]["X-RateLimit-Type"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["DeletedObject"];
                };
            };
            401: components["responses"]["Unauthorized"];
            403: components["responses"]["Forbidden"];
            404: components["responses"]["NotFound"];
            429: components["responses"]["TooManyRequests"];
            500: components["responses"]["InternalError"];
            502: components["responses"]["BadGateway"];
            503: components["responses"]["ServiceUnavailable"];
        };
    };
    cancelResponse: {
        parameters: {
            query?: never;
            header?: never;
            path: {
                response_id: string;
            };
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description The provider's response object. */
            200: {
                headers: {
                    "X-Request-ID": components["headers"]["X-Request-ID"];
                    "X-RateLimit-Limit": components["headers"]["X-RateLimit-Limit"];
                    "X-RateLimit-Remaining": components["headers"]["X-RateLimit-Remaining"];
                    "X-RateLimit-Reset": components["headers"]["X-RateLimit-Reset"];
                    "X-RateLimit-Type": components["headers"]["X-RateLimit-Type"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ProviderObject"];
                };
            };
            401: components["responses"]["Unauthorized"];
            403: components["responses"]["Forbidden"];
            404: components["responses"]["NotFound"];
            429: components["responses"]["TooManyRequests"];
            500: components["responses"]["InternalError"];
            502: components["responses"]["BadGateway"];
            503: components["responses"]["ServiceUnavailable"];
        };
    };
    listResponseInputItems: {
        parameters: {
            query?: never;
            header?: never;
            path: {
                response_id: string;
            };
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description The provider's list of input items. */
            200: {
                headers: {
                    "X-Request-ID": components["headers"]["X-Request-ID"];
                    "X-RateLimit-Limit": components["headers"]["X-RateLimit-Limit"];
                    "X-RateLimit-Remaining": components["headers"]["X-RateLimit-Remaining"];
                    "X-RateLimit-Reset": components["headers"]["X-RateLimit-Reset"];
                    "X-RateLimit-Type": components["headers"]["X-RateLimit-Type"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ProviderObject"];
                };
            };
            401: components["responses"]["Unauthorized"];
            403: components["responses"]["Forbidden"];
            404: components["responses"]["NotFound"];
            429: components["responses"]["TooManyRequests"];
            500: components["responses"]["InternalError"];
            502: components["responses"]["BadGateway"];
            503: components["responses"]["ServiceUnavailable"];
        };
    };
    topupWallet: {
        parameters: {
            query?: {
                /** @description The eCash token, when not sent in the body (URLs may be logged; prefer the body). */
                cashu_token?: string;
            };
            header?: never;
            path?: never;
            cookie?: never;
        };
        requestBody?: {
            content: {
                "application/json": components["schemas"]["TopupRequest"];
            };
        };
        responses: {
            /** @description The balance before and after (msats). */
            200: {
                headers: {
                    "X-Request-ID": components["headers"]["X-Request-ID"];
                    "X-RateLimit-Limit": components["headers"]["X-RateLimit-Limit"];
                    "X-RateLimit-Remaining": components["headers"]["X-RateLimit-Remaining"];
                    "X-RateLimit-Reset": components["headers"]["X-RateLimit-Reset"];
                    "X-RateLimit-Type": components["headers"]["X-RateLimit-Type"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["TopupResult"];
                };
            };
            400: components["responses"]["BadRequest"];
            401: components["responses"]["Unauthorized"];
            403: components["responses"]["Forbidden"];
            409: components["responses"]["Conflict"];
            413: components["responses"]["PayloadTooLarge"];
            415: components["responses"]["UnsupportedMediaType"];
            429: components["responses"]["TooManyRequests"];
            500: components["responses"]["InternalError"];
            503: components["responses"]["ServiceUnavailable"];
        };
    };
    listTransactions: {
        parameters: {
            query?: {
                /** @description How many transactions to return. */
                limit?: number;
                /** @description How many of the newest transactions to skip (paging). */
                offset?: number;
            };
            header?: never;
            path?: never;
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description The newest `limit` transactions; `has_more` says whether older ones exist. */
            200: {
                headers: {
                    "X-Request-ID": components["headers"]["X-Request-ID"];
                    "X-RateLimit-Limit": components["headers"]["X-RateLimit-Limit"];
                    "X-RateLimit-Remaining": components["headers"]["X-RateLimit-Remaining"];
                    "X-RateLimit-Reset": components["headers"]["X-RateLimit-Reset"];
                    "X-RateLimit-Type": components["headers"]["X-RateLimit-Type"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["TransactionList"];
                };
            };
            400: components["responses"]["BadRequest"];
            401: components["responses"]["Unauthorized"];
            403: components["responses"]["Forbidden"];
            429: components["responses"]["TooManyRequests"];
            500: components["responses"]["InternalError"];
            503: components["responses"]["ServiceUnavailable"];
        };
    };
    listWalletAudit: {
        parameters: {
            query?: {
                /** @description How many records to return. */
                limit?: number;
                /** @description Cursor — the `id` of the last record of the previous page; answers older records. */
                before?: string;
            };
            header?: never;
            path?: never;
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description The newest `limit` records; `has_more` says whether older ones exist. */
            200: {
                headers: {
                    "X-Request-ID": components["headers"]["X-Request-ID"];
                    "X-RateLimit-Limit": components["headers"]["X-RateLimit-Limit"];
                    "X-RateLimit-Remaining": components["headers"]["X-RateLimit-Remaining"];
                    "X-RateLimit-Reset": components["headers"]["X-RateLimit-Reset"];
                    "X-RateLimit-Type": components["headers"]["X-RateLimit-Type"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["AuditList"];
                };
            };
            400: components["responses"]["BadRequest"];
            401: components["responses"]["Unauthorized"];
            403: components["responses"]["Forbidden"];
            429: components["responses"]["TooManyRequests"];
            500: components["responses"]["InternalError"];
            503: components["responses"]["ServiceUnavailable"];
        };
    };
    withdrawWallet: {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        requestBody?: {
            content: {
                "application/json": components["schemas"]["WithdrawRequest"];
            };
        };
        responses: {
            /** @description The token and what is left. */
            200: {
                headers: {
                    "X-Request-ID": components["headers"]["X-Request-ID"];
                    "X-RateLimit-Limit": components["headers"]["X-RateLimit-Limit"];
                    "X-RateLimit-Remaining": components["headers"]["X-RateLimit-Remaining"];
                    "X-RateLimit-Reset": components["headers"]["X-RateLimit-Reset"];
                    "X-RateLimit-Type": components["headers"]["X-RateLimit-Type"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["WithdrawResult"];
                };
            };
            400: components["responses"]["BadRequest"];
            401: components["responses"]["Unauthorized"];
            402: components["responses"]["PaymentRequired"];
            403: components["responses"]["Forbidden"];
            413: components["responses"]["PayloadTooLarge"];
            415: components["responses"]["UnsupportedMediaType"];
            429: components["responses"]["TooManyRequests"];
            500: components["responses"]["InternalError"];
            503: components["responses"]["ServiceUnavailable"];
        };
    };
    refundWallet: {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        requestBody?: {
            content: {
                "application/json": components["schemas"]["WalletRefundRequest"];
            };
        };
        responses: {
            /** @description The token and what is left (less than 1 sat), or the Lightning payment and its fee. */
            200: {
                headers: {
                    "X-Request-ID": components["headers"]["X-Request-ID"];
                    "X-RateLimit-Limit": components["headers"]["X-RateLimit-Limit"];
                    "X-RateLimit-Remaining": components["headers"]["X-RateLimit-Remaining"];
                    "X-RateLimit-Reset": components["headers"]["X-RateLimit-Reset"];
                    "X-RateLimit-Type": components["headers"]["X-RateLimit-Type"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["WithdrawResult"] | components["schemas"]["LightningRefundResult"];
                };
            };
            400: components["responses"]["BadRequest"];
            401: components["responses"]["Unauthorized"];
            402: components["responses"]["PaymentRequired"];
            403: components["responses"]["Forbidden"];
            413: components["responses"]["PayloadTooLarge"];
            415: components["responses"]["UnsupportedMediaType"];
            429: components["responses"]["TooManyRequests"];
            500: components["responses"]["InternalError"];
            502: components["responses"]["BadGateway"];
            503: components["responses"]["ServiceUnavailable"];
        };
    };
    refundBalance: {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        requestBody?: {
            content: {
                "application/json": components["schemas"]["BalanceRefundRequest"];
            };
        };
        responses: {
            /** @description The token and what is left (less than 1 sat). */
            200: {
                headers: {
                    "X-Request-ID": components["headers"]["X-Request-ID"];
                    "X-RateLimit-Limit": components["headers"]["X-RateLimit-Limit"];
                    "X-RateLimit-Remaining": components["headers"]["X-RateLimit-Remaining"];
                    "X-RateLimit-Reset": components["headers"]["X-RateLimit-Reset"];
                    "X-RateLimit-Type": components["headers"]["X-RateLimit-Type"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["WithdrawResult"];
                };
            };
            400: components["responses"]["BadRequest"];
            401: components["responses"]["Unauthorized"];
            402: components["responses"]["PaymentRequired"];
            403: components["responses"]["Forbidden"];
            413: components["responses"]["PayloadTooLarge"];
            415: components["responses"]["UnsupportedMediaType"];
            429: components["responses"]["TooManyRequests"];
            500: components["responses"]["InternalError"];
            503: components["responses"]["ServiceUnavailable"];
        };
    };
    createChildKeys: {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        requestBody: {
            content: {
                /**
                 * @example {
                 *       "count": 3,
                 *       "balance_limit": 100000,
                 *       "balance_limit_reset": "daily"
                 *     }
                 */
                "application/json": components["schemas"]["ChildKeyRequest"];
            };
        };
        responses: {
            /** @description The new keys, shown in full only in this answer. */
            201: {
                headers: {
                    "X-Request-ID": components["headers"]["X-Request-ID"];
                    "X-RateLimit-Limit": components["headers"]["X-RateLimit-Limit"];
                    "X-RateLimit-Remaining": components["headers"]["X-RateLimit-Remaining"];
                    "X-RateLimit-Reset": components["headers"]["X-RateLimit-Reset"];
                    "X-RateLimit-Type": components["headers"]["X-RateLimit-Type"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ChildKeysCreated"];
                };
            };
            400: components["responses"]["BadRequest"];
            401: components["responses"]["Unauthorized"];
            402: components["responses"]["PaymentRequired"];
            403: components["responses"]["Forbidden"];
            413: components["responses"]["PayloadTooLarge"];
            415: components["responses"]["UnsupportedMediaType"];
            429: components["responses"]["TooManyRequests"];
            500: components["responses"]["InternalError"];
            503: components["responses"]["ServiceUnavailable"];
        };
    };
    createWalletLightning: {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        requestBody: {
            content: {
                "application/json": components["schemas"]["LightningCreateRequest"];
            };
        };
        responses: {
            /** @description The invoice to pay and the deposit's capability id. */
            201: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["LightningDeposit"];
                };
            };
            400: components["responses"]["BadRequest"];
            429: components["responses"]["TooManyRequests"];
            502: components["responses"]["BadGateway"];
            503: components["responses"]["ServiceUnavailable"];
        };
    };
    getWalletLightning: {
        parameters: {
            query?: never;
            header?: never;
            path: {
                id: string;
            };
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description The deposit. */
            200: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["LightningDeposit"];
                };
            };
            404: components["responses"]["NotFound"];
            503: components["responses"]["ServiceUnavailable"];
        };
    };
    topupWalletLightning: {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        requestBody: {
            content: {
                "application/json": components["schemas"]["LightningTopupRequest"];
            };
        };
        responses: {
            /** @description The invoice to pay and the top-up's id. */
            201: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["LightningDeposit"];
                };
            };
            400: components["responses"]["BadRequest"];
            401: components["responses"]["Unauthorized"];
            403: components["responses"]["Forbidden"];
            429: components["responses"]["TooManyRequests"];
            502: components["responses"]["BadGateway"];
            503: components["responses"]["ServiceUnavailable"];
        };
    };
    getWalletTopupLightning: {
        parameters: {
            query?: never;
            header?: never;
            path: {
                id: string;
            };
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description The top-up. */
            200: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["LightningDeposit"];
                };
            };
            404: components["responses"]["NotFound"];
            503: components["responses"]["ServiceUnavailable"];
        };
    };
    createSubkey: {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        requestBody: {
            content: {
                "application/json": components["schemas"]["SubkeyRequest"];
            };
        };
        responses: {
            /** @description The new sub-key, shown in full only in this answer. */
            201: {
                headers: {
                    "X-Request-ID": components["headers"]["X-Request-ID"];
                    "X-RateLimit-Limit": components["headers"]["X-RateLimit-Limit"];
                    "X-RateLimit-Remaining": components["headers"]["X-RateLimit-Remaining"];
                    "X-RateLimit-Reset": components["headers"]["X-RateLimit-Reset"];
                    "X-RateLimit-Type": components["headers"]["X-RateLimit-Type"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["SubkeyCreated"];
                };
            };
            400: components["responses"]["BadRequest"];
            401: components["responses"]["Unauthorized"];
            402: components["responses"]["PaymentRequired"];
            403: components["responses"]["Forbidden"];
            413: components["responses"]["PayloadTooLarge"];
            415: components["responses"]["UnsupportedMediaType"];
            429: components["responses"]["TooManyRequests"];
            500: components["responses"]["InternalError"];
            503: components["responses"]["ServiceUnavailable"];
        };
    };
    updateWallet: {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        requestBody: {
            content: {
                /**
                 * @example {
                 *       "allowed_ips": [
                 *         "203.0.113.7",
                 *         "198.51.100.0/24"
                 *       ]
                 *     }
                 */
                "application/json": components["schemas"]["WalletUpdateRequest"];
            };
        };
        responses: {
            /** @description The key and its new allow-list. */
            200: {
                headers: {
                    "X-Request-ID": components["headers"]["X-Request-ID"];
                    "X-RateLimit-Limit": components["headers"]["X-RateLimit-Limit"];
                    "X-RateLimit-Remaining": components["headers"]["X-RateLimit-Remaining"];
                    "X-RateLimit-Reset": components["headers"]["X-RateLimit-Reset"];
                    "X-RateLimit-Type": components["headers"]["X-RateLimit-Type"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["WalletUpdated"];
                };
            };
            400: components["responses"]["BadRequest"];
            401: components["responses"]["Unauthorized"];
            403: components["responses"]["Forbidden"];
            413: components["responses"]["PayloadTooLarge"];
            415: components["responses"]["UnsupportedMediaType"];
            429: components["responses"]["TooManyRequests"];
            500: components["responses"]["InternalError"];
            503: components["responses"]["ServiceUnavailable"];
        };
    };
    getWalletAlerts: {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description The settings */
            200: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["WalletAlerts"];
                };
            };
            400: components["responses"]["BadRequest"];
            401: components["responses"]["Unauthorized"];
            403: components["responses"]["Forbidden"];
            429: components["responses"]["TooManyRequests"];
            500: components["responses"]["InternalError"];
            503: components["responses"]["ServiceUnavailable"];
        };
    };
    setWalletAlerts: {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        requestBody: {
            content: {
                "application/json": components["schemas"]["WalletAlertsRequest"];
            };
        };
        responses: {
            /** @description The stored settings */
            200: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["WalletAlerts"];
                };
            };
            400: components["responses"]["BadRequest"];
            401: components["responses"]["Unauthorized"];
            403: components["responses"]["Forbidden"];
            429: components["responses"]["TooManyRequests"];
            500: components["responses"]["InternalError"];
            503: components["responses"]["ServiceUnavailable"];
        };
    };
    listWebhooks: {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description Oldest first */
            200: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["WebhookList"];
                };
            };
            400: components["responses"]["BadRequest"];
            401: components["responses"]["Unauthorized"];
            403: components["responses"]["Forbidden"];
            429: components["responses"]["TooManyRequests"];
            500: components["responses"]["InternalError"];
            503: components["responses"]["ServiceUnavailable"];
        };
    };
    createWebhook: {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        requestBody: {
            content: {
                "application/json": components["schemas"]["WebhookRequest"];
            };
        };
        responses: {
            /** @description Registered */
            201: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Webhook"];
                };
            };
            400: components["responses"]["BadRequest"];
            401: components["responses"]["Unauthorized"];
            403: components["responses"]["Forbidden"];
            429: components["responses"]["TooManyRequests"];
            500: components["responses"]["InternalError"];
            503: components["responses"]["ServiceUnavailable"];
        };
    };
    deleteWebhook: {
        parameters: {
            query?: never;
            header?: never;
            path: {
                id: string;
            };
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description Deleted */
            200: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["WebhookDeleted"];
                };
            };
            400: components["responses"]["BadRequest"];
            401: components["responses"]["Unauthorized"];
            403: components["responses"]["Forbidden"];
            404: components["responses"]["NotFound"];
            429: components["responses"]["TooManyRequests"];
            500: components["responses"]["InternalError"];
            503: components["responses"]["ServiceUnavailable"];
        };
    };
    listWebhookDeliveries: {
        parameters: {
            query?: {
                limit?: number;
            };
            header?: never;
            path: {
                id: string;
            };
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description Attempts */
            200: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["WebhookDeliveryList"];
                };
            };
            400: components["responses"]["BadRequest"];
            401: components["responses"]["Unauthorized"];
            403: components["responses"]["Forbidden"];
            404: components["responses"]["NotFound"];
            429: components["responses"]["TooManyRequests"];
            500: components["responses"]["InternalError"];
            503: components["responses"]["ServiceUnavailable"];
        };
    };
    getAdminDashboard: {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description The dashboard page. */
            200: {
                headers: {
                    "X-Request-ID": components["headers"]["X-Request-ID"];
                    [name: string]: unknown;
                };
                content: {
                    "text/html": string;
                };
            };
            404: components["responses"]["NotFound"];
            429: components["responses"]["TooManyRequests"];
        };
    };
    getAdminSettings: {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description The settings. */
            200: {
                headers: {
                    "X-Request-ID": components["headers"]["X-Request-ID"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["AdminSettings"];
                };
            };
            401: components["responses"]["Unauthorized"];
            403: components["responses"]["Forbidden"];
            429: components["responses"]["TooManyRequests"];
            500: components["responses"]["InternalError"];
            503: components["responses"]["ServiceUnavailable"];
        };
    };
    updateAdminSettings: {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        requestBody: {
            content: {
                /**
                 * @example {
                 *       "fixed_pricing": false,
                 *       "exchange_fee": 1.01
                 *     }
                 */
                "application/json": components["schemas"]["AdminSettingsPatch"];
            };
        };
        responses: {
            /** @description The settings after the change. */
            200: {
                headers: {
                    "X-Request-ID": components["headers"]["X-Request-ID"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["AdminSettings"];
                };
            };
            400: components["responses"]["BadRequest"];
            401: components["responses"]["Unauthorized"];
            403: components["responses"]["Forbidden"];
            413: components["responses"]["PayloadTooLarge"];
            415: components["responses"]["UnsupportedMediaType"];
            429: components["responses"]["TooManyRequests"];
            500: components["responses"]["InternalError"];
            503: components["responses"]["ServiceUnavailable"];
        };
    };
    listAdminAudit: {
        parameters: {
            query?: {
                key_id?: string;
                /** @description Only records answered with this HTTP status. */
                status?: number;
                since?: string;
                until?: string;
                limit?: number;
                /** @description Cursor — the `id` of the last record of the previous page; answers older records. */
                before?: string;
            };
            header?: never;
            path?: never;
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description The newest matching records. */
            200: {
                headers: {
                    "X-Request-ID": components["headers"]["X-Request-ID"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["AuditList"];
                };
            };
            400: components["responses"]["BadRequest"];
            401: components["responses"]["Unauthorized"];
            403: components["responses"]["Forbidden"];
            429: components["responses"]["TooManyRequests"];
            500: components["responses"]["InternalError"];
            503: components["responses"]["ServiceUnavailable"];
        };
    };
    getAdminAsset: {
        parameters: {
            query?: never;
            header?: never;
            path: {
                name: "console.js" | "console.css" | "uPlot.iife.min.js" | "uPlot.min.css";
            };
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description The file (`text/javascript` or `text/css`). */
            200: {
                headers: {
                    "X-Request-ID": components["headers"]["X-Request-ID"];
                    [name: string]: unknown;
                };
                content: {
                    "text/javascript": string;
                    "text/css": string;
                };
            };
            404: components["responses"]["NotFound"];
        };
    };
    getAdminOverview: {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description The overview. */
            200: {
                headers: {
                    "X-Request-ID": components["headers"]["X-Request-ID"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["AdminOverview"];
                };
            };
            401: components["responses"]["Unauthorized"];
            403: components["responses"]["Forbidden"];
            429: components["responses"]["TooManyRequests"];
            500: components["responses"]["InternalError"];
        };
    };
    getAdminTimeseries: {
        parameters: {
            query?: {
                granularity?: "minute" | "hour" | "day";
                /** @description Number of buckets up to the current one (minute ≤ 1440, hour ≤ 2160, day ≤ 1095). */
                points?: number;
            };
            header?: never;
            path?: never;
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description The series. */
            200: {
                headers: {
                    "X-Request-ID": components["headers"]["X-Request-ID"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["AdminTimeseries"];
                };
            };
            400: components["responses"]["BadRequest"];
            401: components["responses"]["Unauthorized"];
            403: components["responses"]["Forbidden"];
            429: components["responses"]["TooManyRequests"];
            500: components["responses"]["InternalError"];
            503: components["responses"]["ServiceUnavailable"];
        };
    };
    getAdminSolvencySamples: {
        parameters: {
            query?: {
                limit?: number;
            };
            header?: never;
            path?: never;
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description The samples. */
            200: {
                headers: {
                    "X-Request-ID": components["headers"]["X-Request-ID"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["AdminSolvencySamples"];
                };
            };
            400: components["responses"]["BadRequest"];
            401: components["responses"]["Unauthorized"];
            403: components["responses"]["Forbidden"];
            429: components["responses"]["TooManyRequests"];
            500: components["responses"]["InternalError"];
            503: components["responses"]["ServiceUnavailable"];
        };
    };
    listAdminWebhookDeliveries: {
        parameters: {
            query?: {
                key_id?: string;
                /** @description The `id` of the last attempt of the previous page. */
                before?: string;
                limit?: number;
                failed?: boolean;
            };
            header?: never;
            path?: never;
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description The attempts. */
            200: {
                headers: {
                    "X-Request-ID": components["headers"]["X-Request-ID"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["AdminDeliveryList"];
                };
            };
            400: components["responses"]["BadRequest"];
            401: components["responses"]["Unauthorized"];
            403: components["responses"]["Forbidden"];
            429: components["responses"]["TooManyRequests"];
            500: components["responses"]["InternalError"];
            503: components["responses"]["ServiceUnavailable"];
        };
    };
    getAdminProviders: {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description The providers. */
            200: {
                headers: {
                    "X-Request-ID": components["headers"]["X-Request-ID"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["AdminProviders"];
                };
            };
            401: components["responses"]["Unauthorized"];
            403: components["responses"]["Forbidden"];
            429: components["responses"]["TooManyRequests"];
            500: components["responses"]["InternalError"];
        };
    };
    getAdminNetwork: {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description The node's network state. */
            200: {
                headers: {
                    "X-Request-ID": components["headers"]["X-Request-ID"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["AdminNetwork"];
                };
            };
            401: components["responses"]["Unauthorized"];
            403: components["responses"]["Forbidden"];
            429: components["responses"]["TooManyRequests"];
            500: components["responses"]["InternalError"];
            503: components["responses"]["ServiceUnavailable"];
        };
    };
    publishAdminNetworkListing: {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        requestBody: {
            content: {
                "application/json": components["schemas"]["AdminConfirm"];
            };
        };
        responses: {
            /** @description The node's network state after the pass. */
            200: {
                headers: {
                    "X-Request-ID": components["headers"]["X-Request-ID"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["AdminNetwork"];
                };
            };
            400: components["responses"]["BadRequest"];
            401: components["responses"]["Unauthorized"];
            403: components["responses"]["Forbidden"];
            413: components["responses"]["PayloadTooLarge"];
            415: components["responses"]["UnsupportedMediaType"];
            429: components["responses"]["TooManyRequests"];
            500: components["responses"]["InternalError"];
            503: components["responses"]["ServiceUnavailable"];
        };
    };
    lookupAdminKey: {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        requestBody: {
            content: {
                "application/json": components["schemas"]["AdminKeyLookup"];
            };
        };
        responses: {
            /** @description The key. */
            200: {
                headers: {
                    "X-Request-ID": components["headers"]["X-Request-ID"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["AdminKeyInfo"];
                };
            };
            400: components["responses"]["BadRequest"];
            401: components["responses"]["Unauthorized"];
            403: components["responses"]["Forbidden"];
            404: components["responses"]["NotFound"];
            429: components["responses"]["TooManyRequests"];
            500: components["responses"]["InternalError"];
            503: components["responses"]["ServiceUnavailable"];
        };
    };
    adminLogin: {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        requestBody: {
            content: {
                "application/json": components["schemas"]["AdminLogin"];
            };
        };
        responses: {
            /** @description Logged in; the session cookie is set. */
            200: {
                headers: {
                    "X-Request-ID": components["headers"]["X-Request-ID"];
                    /** @description `admin_session=<id>; HttpOnly; SameSite=Strict; Path=/admin; Max-Age=<s>[; Secure]` */
                    "Set-Cookie"?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["AdminLoginResult"];
                };
            };
            400: components["responses"]["BadRequest"];
            401: components["responses"]["Unauthorized"];
            403: components["responses"]["Forbidden"];
            413: components["responses"]["PayloadTooLarge"];
            415: components["responses"]["UnsupportedMediaType"];
            429: components["responses"]["TooManyRequests"];
            500: components["responses"]["InternalError"];
            503: components["responses"]["ServiceUnavailable"];
        };
    };
    adminLogout: {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description Logged out. */
            204: {
                headers: {
                    "X-Request-ID": components["headers"]["X-Request-ID"];
                    /** @description `admin_session=; …; Max-Age=0` */
                    "Set-Cookie"?: string;
                    [name: string]: unknown;
                };
                content?: never;
            };
            403: components["responses"]["Forbidden"];
            500: components["responses"]["InternalError"];
            503: components["responses"]["ServiceUnavailable"];
        };
    };
    deleteAdminKey: {
        parameters: {
            query?: {
                refund?: "true" | "false";
            };
            header?: never;
            path: {
                /** @description The key's public id. */
                key_id: string;
            };
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description The key is deleted (or, if the delete failed after the refund, `deleted` is false and the token is still here). */
            200: {
                headers: {
                    "X-Request-ID": components["headers"]["X-Request-ID"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["KeyDeleted"];
                };
            };
            400: components["responses"]["BadRequest"];
            401: components["responses"]["Unauthorized"];
            403: components["responses"]["Forbidden"];
            404: components["responses"]["NotFound"];
            409: components["responses"]["Conflict"];
            429: components["responses"]["TooManyRequests"];
            500: components["responses"]["InternalError"];
            503: components["responses"]["ServiceUnavailable"];
        };
    };
    updateAdminKey: {
        parameters: {
            query?: never;
            header?: never;
            path: {
                /** @description The key's public id. */
                key_id: string;
            };
            cookie?: never;
        };
        requestBody: {
            content: {
                "application/json": components["schemas"]["AdminKeyPatch"];
            };
        };
        responses: {
            /** @description The key after the change, and whether every process has applied it. */
            200: {
                headers: {
                    "X-Request-ID": components["headers"]["X-Request-ID"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["AdminKeyPatchResult"];
                };
            };
            400: components["responses"]["BadRequest"];
            401: components["responses"]["Unauthorized"];
            403: components["responses"]["Forbidden"];
            404: components["responses"]["NotFound"];
            413: components["responses"]["PayloadTooLarge"];
            415: components["responses"]["UnsupportedMediaType"];
            429: components["responses"]["TooManyRequests"];
            500: components["responses"]["InternalError"];
            503: components["responses"]["ServiceUnavailable"];
        };
    };
    runAdminRecovery: {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        requestBody: {
            content: {
                "application/json": components["schemas"]["AdminConfirm"];
            };
        };
        responses: {
            /** @description What the pass did. */
            200: {
                headers: {
                    "X-Request-ID": components["headers"]["X-Request-ID"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["AdminRecoveryReport"];
                };
            };
            400: components["responses"]["BadRequest"];
            401: components["responses"]["Unauthorized"];
            403: components["responses"]["Forbidden"];
            429: components["responses"]["TooManyRequests"];
            500: components["responses"]["InternalError"];
            503: components["responses"]["ServiceUnavailable"];
        };
    };
    runAdminSolvencyCheck: {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        requestBody: {
            content: {
                "application/json": components["schemas"]["AdminConfirm"];
            };
        };
        responses: {
            /** @description The check's result. */
            200: {
                headers: {
                    "X-Request-ID": components["headers"]["X-Request-ID"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["AdminSolvencyReport"];
                };
            };
            400: components["responses"]["BadRequest"];
            401: components["responses"]["Unauthorized"];
            403: components["responses"]["Forbidden"];
            429: components["responses"]["TooManyRequests"];
            500: components["responses"]["InternalError"];
            502: components["responses"]["BadGateway"];
            503: components["responses"]["ServiceUnavailable"];
        };
    };
    runAdminPayout: {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        requestBody: {
            content: {
                "application/json": components["schemas"]["AdminPayoutRequest"];
            };
        };
        responses: {
            /** @description The payment. */
            200: {
                headers: {
                    "X-Request-ID": components["headers"]["X-Request-ID"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["AdminPayoutResult"];
                };
            };
            400: components["responses"]["BadRequest"];
            401: components["responses"]["Unauthorized"];
            403: components["responses"]["Forbidden"];
            429: components["responses"]["TooManyRequests"];
            500: components["responses"]["InternalError"];
            502: components["responses"]["BadGateway"];
            503: components["responses"]["ServiceUnavailable"];
        };
    };
    previewAdminPayout: {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        requestBody: {
            content: {
                "application/json": components["schemas"]["AdminPayoutPreviewRequest"];
            };
        };
        responses: {
            /** @description The preview. */
            200: {
                headers: {
                    "X-Request-ID": components["headers"]["X-Request-ID"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["AdminPayoutPreview"];
                };
            };
            400: components["responses"]["BadRequest"];
            401: components["responses"]["Unauthorized"];
            403: components["responses"]["Forbidden"];
            429: components["responses"]["TooManyRequests"];
            500: components["responses"]["InternalError"];
            503: components["responses"]["ServiceUnavailable"];
        };
    };
    getHealth: {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description The process is alive. */
            200: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Health"];
                };
            };
        };
    };
    getReadiness: {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description Ready. */
            200: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Readiness"];
                };
            };
            503: components["responses"]["ServiceUnavailable"];
        };
    };
    getMetrics: {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description The metrics. */
            200: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    /**
                     * @example # HELP gateway_requests_total Requests handled
                     *     # TYPE gateway_requests_total counter
                     *     gateway_requests_total{route="/v1/chat/completions",status="200"} 42
                     */
                    "text/plain": string;
                };
            };
            401: components["responses"]["Unauthorized"];
            403: components["responses"]["Forbidden"];
        };
    };
    getOpenApiDocument: {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description The OpenAPI 3.0 document. */
            200: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": Record<string, never>;
                };
            };
        };
    };
    getSwaggerUi: {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description The Swagger UI page. */
            200: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "text/html": string;
                };
            };
        };
    };
    getRedoc: {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description The ReDoc page. */
            200: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "text/html": string;
                };
            };
        };
    };
    proxyGet: {
        parameters: {
            query?: never;
            header?: never;
            path: {
                /** @description The rest of the path after /v1/, slashes included (e.g. `images/variations`). */
                path: string;
            };
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description The upstream's answer, relayed (any status and content type it sends). */
            200: {
                headers: {
                    "X-Request-ID": components["headers"]["X-Request-ID"];
                    "X-RateLimit-Limit": components["headers"]["X-RateLimit-Limit"];
                    "X-RateLimit-Remaining": components["headers"]["X-RateLimit-Remaining"];
                    "X-RateLimit-Reset": components["headers"]["X-RateLimit-Reset"];
                    "X-RateLimit-Type": components["headers"]["X-RateLimit-Type"];
                    "X-Cashu": components["headers"]["X-Cashu-Change"];
                    "X-Cashu-Change": components["headers"]["X-Cashu-Change-Status"];
                    "X-Node-Cost": components["headers"]["X-Node-Cost"];
                    [name: string]: unknown;
                };
                content: {
                    "*/*": unknown;
                };
            };
            400: components["responses"]["BadRequest"];
            401: components["responses"]["Unauthorized"];
            402: components["responses"]["PaymentRequired"];
            403: components["responses"]["Forbidden"];
            409: components["responses"]["Conflict"];
            413: components["responses"]["PayloadTooLarge"];
            429: components["responses"]["TooManyRequests"];
            500: components["responses"]["InternalError"];
            502: components["responses"]["BadGateway"];
            503: components["responses"]["ServiceUnavailable"];
            504: components["responses"]["GatewayTimeout"];
        };
    };
    proxyPut: {
        parameters: {
            query?: never;
            header?: never;
            path: {
                /** @description The rest of the path after /v1/, slashes included (e.g. `images/variations`). */
                path: string;
            };
            cookie?: never;
        };
        requestBody?: {
            content: {
                "*/*": unknown;
            };
        };
        responses: {
            /** @description The upstream's answer, relayed (any status and content type it sends). */
            200: {
                headers: {
                    "X-Request-ID": components["headers"]["X-Request-ID"];
                    "X-RateLimit-Limit": components["headers"]["X-RateLimit-Limit"];
                    "X-RateLimit-Remaining": components["headers"]["X-RateLimit-Remaining"];
                    "X-RateLimit-Reset": components["headers"]["X-RateLimit-Reset"];
                    "X-RateLimit-Type": components["headers"]["X-RateLimit-Type"];
                    "X-Cashu": components["headers"]["X-Cashu-Change"];
                    "X-Cashu-Change": components["headers"]["X-Cashu-Change-Status"];
                    "X-Node-Cost": components["headers"]["X-Node-Cost"];
                    [name: string]: unknown;
                };
                content: {
                    "*/*": unknown;
                };
            };
            400: components["responses"]["BadRequest"];
            401: components["responses"]["Unauthorized"];
            402: components["responses"]["PaymentRequired"];
            403: components["responses"]["Forbidden"];
            409: components["responses"]["Conflict"];
            413: components["responses"]["PayloadTooLarge"];
            429: components["responses"]["TooManyRequests"];
            500: components["responses"]["InternalError"];
            502: components["responses"]["BadGateway"];
            503: components["responses"]["ServiceUnavailable"];
            504: components["responses"]["GatewayTimeout"];
        };
    };
    proxyPost: {
        parameters: {
            query?: never;
            header?: never;
            path: {
                /** @description The rest of the path after /v1/, slashes included (e.g. `images/variations`). */
                path: string;
            };
            cookie?: never;
        };
        requestBody?: {
            content: {
                "*/*": unknown;
            };
        };
        responses: {
            /** @description The upstream's answer, relayed (any status and content type it sends). */
            200: {
                headers: {
                    "X-Request-ID": components["headers"]["X-Request-ID"];
                    "X-RateLimit-Limit": components["headers"]["X-RateLimit-Limit"];
                    "X-RateLimit-Remaining": components["headers"]["X-RateLimit-Remaining"];
                    "X-RateLimit-Reset": components["headers"]["X-RateLimit-Reset"];
                    "X-RateLimit-Type": components["headers"]["X-RateLimit-Type"];
                    "X-Cashu": components["headers"]["X-Cashu-Change"];
                    "X-Cashu-Change": components["headers"]["X-Cashu-Change-Status"];
                    "X-Node-Cost": components["headers"]["X-Node-Cost"];
                    [name: string]: unknown;
                };
                content: {
                    "*/*": unknown;
                };
            };
            400: components["responses"]["BadRequest"];
            401: components["responses"]["Unauthorized"];
            402: components["responses"]["PaymentRequired"];
            403: components["responses"]["Forbidden"];
            409: components["responses"]["Conflict"];
            413: components["responses"]["PayloadTooLarge"];
            429: components["responses"]["TooManyRequests"];
            500: components["responses"]["InternalError"];
            502: components["responses"]["BadGateway"];
            503: components["responses"]["ServiceUnavailable"];
            504: components["responses"]["GatewayTimeout"];
        };
    };
    proxyDelete: {
        parameters: {
            query?: never;
            header?: never;
            path: {
                /** @description The rest of the path after /v1/, slashes included (e.g. `images/variations`). */
                path: string;
            };
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description The upstream's answer, relayed (any status and content type it sends). */
            200: {
                headers: {
                    "X-Request-ID": components["headers"]["X-Request-ID"];
                    "X-RateLimit-Limit": components["headers"]["X-RateLimit-Limit"];
                    "X-RateLimit-Remaining": components["headers"]["X-RateLimit-Remaining"];
                    "X-RateLimit-Reset": components["headers"]["X-RateLimit-Reset"];
                    "X-RateLimit-Type": components["headers"]["X-RateLimit-Type"];
                    "X-Cashu": components["headers"]["X-Cashu-Change"];
                    "X-Cashu-Change": components["headers"]["X-Cashu-Change-Status"];
                    "X-Node-Cost": components["headers"]["X-Node-Cost"];
                    [name: string]: unknown;
                };
                content: {
                    "*/*": unknown;
                };
            };
            400: components["responses"]["BadRequest"];
            401: components["responses"]["Unauthorized"];
            402: components["responses"]["PaymentRequired"];
            403: components["responses"]["Forbidden"];
            409: components["responses"]["Conflict"];
            413: components["responses"]["PayloadTooLarge"];
            429: components["responses"]["TooManyRequests"];
            500: components["responses"]["InternalError"];
            502: components["responses"]["BadGateway"];
            503: components["responses"]["ServiceUnavailable"];
            504: components["responses"]["GatewayTimeout"];
        };
    };
    proxyPatch: {
        parameters: {
            query?: never;
            header?: never;
            path: {
                /** @description The rest of the path after /v1/, slashes included (e.g. `images/variations`). */
                path: string;
            };
            cookie?: never;
        };
        requestBody?: {
            content: {
                "*/*": unknown;
            };
        };
        responses: {
            /** @description The upstream's answer, relayed (any status and content type it sends). */
            200: {
                headers: {
                    "X-Request-ID": components["headers"]["X-Request-ID"];
                    "X-RateLimit-Limit": components["headers"]["X-RateLimit-Limit"];
                    "X-RateLimit-Remaining": components["headers"]["X-RateLimit-Remaining"];
                    "X-RateLimit-Reset": components["headers"]["X-RateLimit-Reset"];
                    "X-RateLimit-Type": components["headers"]["X-RateLimit-Type"];
                    "X-Cashu": components["headers"]["X-Cashu-Change"];
                    "X-Cashu-Change": components["headers"]["X-Cashu-Change-Status"];
                    "X-Node-Cost": components["headers"]["X-Node-Cost"];
                    [name: string]: unknown;
                };
                content: {
                    "*/*": unknown;
                };
            };
            400: components["responses"]["BadRequest"];
            401: components["responses"]["Unauthorized"];
            402: components["responses"]["PaymentRequired"];
            403: components["responses"]["Forbidden"];
            409: components["responses"]["Conflict"];
            413: components["responses"]["PayloadTooLarge"];
            429: components["responses"]["TooManyRequests"];
            500: components["responses"]["InternalError"];
            502: components["responses"]["BadGateway"];
            503: components["responses"]["ServiceUnavailable"];
            504: components["responses"]["GatewayTimeout"];
        };
    };
}
