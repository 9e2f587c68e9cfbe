package durable

import (
	"fmt"

	"github.com/pflow-go/pflow/internal/durable/wire"
	commonpb "go.temporal.io/api/common/v1"
	"go.temporal.io/sdk/converter"
	"go.temporal.io/sdk/temporal"
)

// What is stored in Temporal history never holds a value in clear: every
// payload (workflow inputs, step params and outputs, results) and every
// failure message is sealed with AES-256-GCM under a key that only the
// machines running pflow hold (PFLOW_TEMPORAL_KEY, or the key file). The
// Temporal server, its database and its UI see ciphertext.

const (
	encodingEncrypted = "binary/pflow-aes-gcm"
	metaEncoding      = "encoding"
	metaKeyID         = "pflow-key-id"
)

// codec seals and opens payloads.
type codec struct{ key *wire.Key }

func (c codec) Encode(in []*commonpb.Payload) ([]*commonpb.Payload, error) {
	out := make([]*commonpb.Payload, len(in))
	for i, p := range in {
		plain, err := p.Marshal()
		if err != nil {
			return nil, err
		}
		sealed, err := c.key.Seal(plain)
		if err != nil {
			return nil, err
		}
		out[i] = &commonpb.Payload{
			Metadata: map[string][]byte{metaEncoding: []byte(encodingEncrypted), metaKeyID: []byte(c.key.ID())},
			Data:     sealed,
		}
	}
	return out, nil
}

func (c codec) Decode(in []*commonpb.Payload) ([]*commonpb.Payload, error) {
	out := make([]*commonpb.Payload, len(in))
	for i, p := range in {
		if string(p.Metadata[metaEncoding]) != encodingEncrypted {
			out[i] = p
			continue
		}
		if id := string(p.Metadata[metaKeyID]); id != c.key.ID() {
			return nil, fmt.Errorf("this Temporal payload was sealed with pflow key %s, but this process holds key %s: give every worker and submitter the same %s (or the same key file)", id, c.key.ID(), wire.KeyEnv)
		}
		plain, err := c.key.Open(p.Data)
		if err != nil {
			return nil, err
		}
		var dec commonpb.Payload
		if err := dec.Unmarshal(plain); err != nil {
			return nil, err
		}
		out[i] = &dec
	}
	return out, nil
}

// dataConverter seals every payload with key.
func dataConverter(key *wire.Key) converter.DataConverter {
	return converter.NewCodecDataConverter(converter.GetDefaultDataConverter(), codec{key: key})
}

// failureConverter seals failure messages and stack traces too.
func failureConverter(dc converter.DataConverter) converter.FailureConverter {
	return temporal.NewDefaultFailureConverter(temporal.DefaultFailureConverterOptions{DataConverter: dc, EncodeCommonAttributes: true})
}
