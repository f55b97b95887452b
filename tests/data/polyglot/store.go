// Package store keeps orders in memory for the demo service.
package store

import (
	"errors"
	"sync"
)

// ErrMissing is returned when an order id is unknown.
var ErrMissing = errors.New("order not found")

// Order is one customer's order.
type Order struct {
	ID    string
	Total int
}

// Store is a concurrency-safe map of orders.
type Store struct {
	mu     sync.Mutex
	orders map[string]Order
}

// New returns an empty store.
func New() *Store {
	return &Store{orders: map[string]Order{}}
}

// Put saves an order, replacing any with the same id.
func (s *Store) Put(order Order) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.orders[order.ID] = order
}

// Get finds an order by id.
func (s *Store) Get(id string) (Order, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	order, ok := s.orders[id]
	if !ok {
		return Order{}, ErrMissing
	}
	return order, nil
}
