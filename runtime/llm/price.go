package llm

// AnyModel is the model key of a price that applies to every model of a
// provider without a price of its own (a self-hosted server billed at one
// rate, or at zero).
const AnyModel = "*"

// Price is what a model costs, in USD per million tokens.
type Price struct {
	// InputPerMTok is the price of a million prompt tokens.
	InputPerMTok float64
	// OutputPerMTok is the price of a million completion tokens.
	OutputPerMTok float64
}

// Cost is the price of u's tokens in USD.
func (p Price) Cost(u Usage) float64 {
	return (float64(u.PromptTokens)*p.InputPerMTok + float64(u.CompletionTokens)*p.OutputPerMTok) / 1e6
}

// PriceTable is a provider's prices by model id, as sent to the provider
// ("anthropic/claude-sonnet-4-5"); the key [AnyModel] covers every other
// model.
type PriceTable map[string]Price

// lookup returns model's price.
func (t PriceTable) lookup(model string) (Price, bool) {
	if p, ok := t[model]; ok {
		return p, true
	}
	p, ok := t[AnyModel]
	return p, ok
}
