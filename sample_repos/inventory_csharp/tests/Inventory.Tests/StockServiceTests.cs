using System.Collections.Generic;
using System.Threading.Tasks;
using Inventory.Data;
using Inventory.Models;
using Inventory.Services;
using Microsoft.Extensions.Logging.Abstractions;
using Xunit;

namespace Inventory.Tests;

public class StockServiceTests
{
    private sealed class RecordingSupplier : ISupplierClient
    {
        public List<(string Sku, int Quantity)> Orders { get; } = new();

        public Task<string> OrderAsync(string sku, int quantity, System.Threading.CancellationToken token)
        {
            Orders.Add((sku, quantity));
            return Task.FromResult($"PO-{Orders.Count}");
        }
    }

    [Fact]
    public async Task Shipping_below_the_reorder_level_reports_the_item()
    {
        var repository = new InMemoryStockRepository().Seed(new StockItem("A-1", "Anvil", 12, 10));
        var service = new StockService(
            repository, new RecordingSupplier(), NullLogger<StockService>.Instance, System.TimeProvider.System);

        var low = await service.ShipOrderAsync(new Dictionary<string, int> { ["A-1"] = 3 });

        Assert.Single(low);
        Assert.Equal(9, low[0].OnHand);
    }

    [Fact]
    public async Task Reordering_orders_up_to_the_margin()
    {
        var supplier = new RecordingSupplier();
        var repository = new InMemoryStockRepository().Seed(new StockItem("B-2", "Bolt", 2, 5));
        var service = new StockService(
            repository, supplier, NullLogger<StockService>.Instance, System.TimeProvider.System)
        {
            ReorderMargin = 10,
        };

        Assert.Equal(1, await service.ReorderLowStockAsync());
        Assert.Equal(("B-2", 13), supplier.Orders[0]);
    }
}
