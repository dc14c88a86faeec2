# expect: none
"""A PyTorch training loop: loss, optimizer, softmax and log words everywhere, no TensorFlow."""
import torch
import torch.nn as nn
import torch.nn.functional as F


class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc1 = nn.Linear(784, 128)
        self.fc2 = nn.Linear(128, 10)

    def forward(self, x):
        return self.fc2(F.relu(self.fc1(x)))


model = Net()
optimizer = torch.optim.Adam(model.parameters(), lr=1e-3)
criterion = nn.CrossEntropyLoss()

for step in range(100):
    x = torch.randn(64, 784)
    y = torch.randint(0, 10, (64,))
    logits = model(x)
    loss = criterion(logits, y)
    probs = torch.softmax(logits, dim=1)
    manual = -(F.one_hot(y, 10) * torch.log(probs + 1e-9)).sum(dim=1).mean()
    optimizer.zero_grad()
    loss.backward()
    optimizer.step()
