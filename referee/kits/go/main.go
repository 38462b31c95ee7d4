// {{NAME}}: a koikoi/1 bot. It reads one JSON message per line on stdin and answers requests on stdout.
package main

import (
	"bufio"
	"encoding/json"
	"fmt"
	"log"
	"os"
	"strings"
)

// Message holds the fields of every referee message this bot reads.
type Message struct {
	Type     string            `json:"type"`
	Seat     int               `json:"seat"`
	ID       int               `json:"id"`
	Decision string            `json:"decision"`
	View     View              `json:"view"`
	Legal    []json.RawMessage `json:"legal"` // sent back as they are
	Match    struct{ ID string `json:"id"` } `json:"match"`
	Rules    struct{ Name string `json:"name"` } `json:"rules"`
	Text     string            `json:"message"`
}

// View is what the seat may know when it must decide (a few of its fields).
type View struct {
	Hand  []string `json:"hand"`
	Field []string `json:"field"`
}

// Action is one element of a request's legal list.
type Action struct {
	Play    string `json:"play,omitempty"`
	Capture string `json:"capture,omitempty"`
	Koikoi  *bool  `json:"koikoi,omitempty"`
}

func month(card string) string { return strings.SplitN(card, "-", 2)[0] }

// choose stops at the first yaku, else plays a card that takes something from the field.
func choose(m *Message) json.RawMessage {
	onField := map[string]bool{}
	for _, c := range m.View.Field {
		onField[month(c)] = true
	}
	for _, raw := range m.Legal {
		var a Action
		if err := json.Unmarshal(raw, &a); err != nil {
			continue
		}
		if m.Decision == "koikoi" {
			if a.Koikoi != nil && !*a.Koikoi {
				return raw
			}
		} else if a.Capture != "" || onField[month(a.Play)] {
			return raw
		}
	}
	return m.Legal[0]
}

func main() {
	log.SetOutput(os.Stderr) // debug output goes to stderr: stdout is for protocol lines only
	log.SetPrefix("[{{NAME}}] ")
	in := bufio.NewScanner(os.Stdin)
	in.Buffer(make([]byte, 1<<20), 1<<24)
	out := bufio.NewWriter(os.Stdout)
	send := func(v any) {
		line, _ := json.Marshal(v)
		out.Write(append(line, '\n'))
		out.Flush() // an answer left in a buffer never reaches the referee
	}
	for in.Scan() {
		var m Message
		if err := json.Unmarshal(in.Bytes(), &m); err != nil {
			log.Fatalf("bad line: %v", err)
		}
		switch m.Type {
		case "hello":
			log.Printf("seat %d rules %s", m.Seat, m.Rules.Name)
			send(map[string]string{"type": "hello", "name": "{{NAME}}", "version": "0.1", "protocol": "koikoi/1"})
		case "new_match":
			log.Printf("new match %s", m.Match.ID)
		case "request":
			send(map[string]any{"type": "action", "id": m.ID, "action": choose(&m)})
		case "error":
			log.Printf("referee: %s", m.Text)
		case "bye":
			return
		}
	}
	fmt.Fprintln(os.Stderr, "end of input")
}
