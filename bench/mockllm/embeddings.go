package mockllm

import (
	"encoding/json"
	"hash/fnv"
	"math"
	"strings"
	"unicode"

	"github.com/valyala/fasthttp"
)

// DefaultEmbeddingDims is the size of the mock's vectors when a request
// does not ask for "dimensions".
const DefaultEmbeddingDims = 256

// maxEmbeddingDims bounds what a request may ask for.
const maxEmbeddingDims = 4096

// Embedding is the mock's deterministic embedding of text: a bag of
// concepts hashed into dims signed buckets and scaled to unit length.
//
// Each word is lower-cased; stop words ("a", "the", "what", "my", ...) are
// dropped; a word in the concept table counts as its concept (twice), so
// that texts sharing a meaning but no word land close: "My car is a red
// Volvo" and "What vehicle do I drive?" both hold the concept vehicle and
// have a cosine similarity near 0.9, while "I like green tea" shares
// nothing with the latter and is near 0. Any other word counts as itself,
// so that identical words still match. Real embedding models behave the
// same way at this scale; the table only needs to cover what tests say.
func Embedding(text string, dims int) []float32 {
	if dims <= 0 {
		dims = DefaultEmbeddingDims
	}
	v := make([]float32, dims)
	for _, w := range strings.FieldsFunc(strings.ToLower(text), func(r rune) bool {
		return !unicode.IsLetter(r) && !unicode.IsDigit(r)
	}) {
		if stopWords[w] {
			continue
		}
		feature, weight := "w:"+w, float32(1)
		if c, ok := concepts[w]; ok {
			feature, weight = "c:"+c, 2
		}
		h := fnv.New64a()
		_, _ = h.Write([]byte(feature))
		sum := h.Sum64()
		sign := float32(1)
		if sum>>63 == 1 {
			sign = -1
		}
		v[sum%uint64(dims)] += sign * weight
	}
	var norm float64
	for _, x := range v {
		norm += float64(x) * float64(x)
	}
	if norm == 0 {
		v[0] = 1 // a text of stop words only: some direction, matching little
		return v
	}
	n := float32(math.Sqrt(norm))
	for i := range v {
		v[i] /= n
	}
	return v
}

// stopWords carry no meaning of their own.
var stopWords = setOf(`a an the is are was were be been am i me my mine you your we our us he she it its they them their
this that these those what which who whom whose do does did have has had of to in on at for with by from and or but
about as into than then so if not no yes can could would should will shall please tell know remember`)

// concepts maps words to the meaning they share with others.
var concepts = conceptTable(map[string]string{
	"vehicle":  "car cars vehicle vehicles automobile drive drives driving drove truck van motorbike motorcycle volvo bmw audi tesla toyota ford",
	"colour":   "colour color colours colors red blue green yellow black white grey gray purple orange pink",
	"pet":      "pet pets dog dogs puppy cat cats kitten hamster parrot",
	"family":   "family wife husband partner spouse married mother father mom dad parents sister brother son daughter children kids",
	"drink":    "drink drinks tea coffee beverage juice beer wine",
	"food":     "food eat eats eating meal dinner lunch breakfast pizza pasta dish cuisine vegetarian vegan",
	"home":     "home house apartment flat live lives living address reside city town",
	"work":     "work job employer company office career profession occupation colleague",
	"birthday": "birthday born birth age",
	"allergy":  "allergy allergies allergic peanut peanuts intolerance",
	"travel":   "travel trip flight flights fly flying plane airport vacation holiday journey",
	"language": "language languages speak speaks german english french spanish italian",
	"health":   "doctor dentist clinic appointment medicine health sick",
	"music":    "music song songs band guitar piano concert",
	"order":    "order ordered orders purchase purchased bought buy teapot teapots",
})

func setOf(words string) map[string]bool {
	out := make(map[string]bool)
	for _, w := range strings.Fields(words) {
		out[w] = true
	}
	return out
}

func conceptTable(byConcept map[string]string) map[string]string {
	out := make(map[string]string)
	for c, words := range byConcept {
		for _, w := range strings.Fields(words) {
			out[w] = c
		}
	}
	return out
}

type embeddingRequest struct {
	Model      string          `json:"model"`
	Input      json.RawMessage `json:"input"`
	Dimensions int             `json:"dimensions"`
}

type embeddingData struct {
	Object    string    `json:"object"`
	Index     int       `json:"index"`
	Embedding []float32 `json:"embedding"`
}

type embeddingResponse struct {
	Object string          `json:"object"`
	Data   []embeddingData `json:"data"`
	Model  string          `json:"model"`
	Usage  usage           `json:"usage"`
}

// FailEmbeddings makes POST /v1/embeddings answer status (an outage: 500,
// 503; a refusal: 400) until it is called with 0.
func (s *Server) FailEmbeddings(status int) { s.embedFail.Store(int32(status)) }

// EmbeddingRequests counts the authorized POST /v1/embeddings requests,
// failed ones included, since the server started.
func (s *Server) EmbeddingRequests() int64 { return s.embedReqs.Load() }

// EmbeddedTexts counts the texts embedded since the server started.
func (s *Server) EmbeddedTexts() int64 { return s.embedTexts.Load() }

// embeddings answers POST /v1/embeddings: input is a string or a list of
// strings, each answered with Embedding at the requested dimensions.
func (s *Server) embeddings(ctx *fasthttp.RequestCtx) {
	s.embedReqs.Add(1)
	var req embeddingRequest
	if err := json.Unmarshal(ctx.PostBody(), &req); err != nil {
		writeError(ctx, fasthttp.StatusBadRequest, "invalid_request_error", "invalid_json", "request body is not valid JSON: "+err.Error())
		return
	}
	var inputs []string
	if len(req.Input) > 0 && req.Input[0] == '"' {
		var one string
		if err := json.Unmarshal(req.Input, &one); err != nil {
			writeError(ctx, fasthttp.StatusBadRequest, "invalid_request_error", "invalid_input", err.Error())
			return
		}
		inputs = []string{one}
	} else if err := json.Unmarshal(req.Input, &inputs); err != nil || len(inputs) == 0 {
		writeError(ctx, fasthttp.StatusBadRequest, "invalid_request_error", "invalid_input", "input must be a string or a non-empty list of strings")
		return
	}
	if req.Dimensions < 0 || req.Dimensions > maxEmbeddingDims {
		writeError(ctx, fasthttp.StatusBadRequest, "invalid_request_error", "invalid_dimensions", "dimensions must be between 1 and 4096")
		return
	}
	if status := int(s.embedFail.Load()); status != 0 {
		writeError(ctx, status, "server_error", "embeddings_down", "embeddings are failing (injected by mockllm)")
		return
	}
	if !s.wait() {
		writeError(ctx, fasthttp.StatusServiceUnavailable, "server_error", "shutting_down", "mock server is shutting down")
		return
	}
	s.embedTexts.Add(int64(len(inputs)))
	res := embeddingResponse{Object: "list", Model: req.Model, Data: make([]embeddingData, len(inputs))}
	chars := 0
	for i, in := range inputs {
		res.Data[i] = embeddingData{Object: "embedding", Index: i, Embedding: Embedding(in, req.Dimensions)}
		chars += len(in)
	}
	res.Usage = usage{PromptTokens: tokens(chars), TotalTokens: tokens(chars)}
	body, err := json.Marshal(&res)
	if err != nil {
		writeError(ctx, fasthttp.StatusInternalServerError, "server_error", "encode", err.Error())
		return
	}
	ctx.SetContentType("application/json")
	ctx.SetBody(body)
}
